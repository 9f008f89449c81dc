#!/usr/bin/env python3
"""Harness 2: the client (`servebench run`) against the floor, side by side in one run.

Sections (--sections, default all):
  cpu      client CPU per streamed token vs floor_reader, both reading floor_sse_server in the
           same configuration: "paced" (256 streams, 10 ms ITL, one event per write, so one
           event per read) and "batched" (unpaced, 16 events per write); and both reading
           `servebench sim` in "sim-paced" (256 streams, 10 ms ITL, each stream on its own
           tick, the first requests spread evenly over one ITL). CPU is the client
           process's rusage (os.wait4: whole process, startup included) and, for servebench, its
           own in-run figure (result JSON servebench.client.cpu_*); the event count is the
           server's (identical for both clients).
  rps      requests/s of 1-token requests at 64 in flight (client pinned to one core) vs
           floor_reader.
  pacing   |sent - intended| p50/p99/p99.9 from the records JSONL at 1k, 10k, 50k req/s
           (Poisson, 2 s) vs floor_pacer (timerfd + 50 µs spin) at the same rate, and vs
           floor_pacer --send-port (the same schedule, sending to floor_sse_server).
  streams  10,000 concurrent streams from one servebench process (500 ms ITL, 10 tokens),
           checked by the server's peak open streams and the result's failures.
  error    TTFT/ITL measurement error: servebench's chunk arrival times (records, + t0_mono_ns)
           minus the simulator's send times (--trace-out), matched by x-request-id and token
           index, at 256 and 1000 streams (10 ms ITL), vs the one-way delay floor_reader
           measures from floor_sse_server's send stamps in the same configuration.

Every servebench measurement runs once per --engines transport (default http1,curl: servebench's
own HTTP/1.1 transport and libcurl's; "http1+read" is http1 with --arrival-clock read, chunks
timed when read instead of by the kernel's receive stamps), side by side with the floor in the
same repetition.

  bench/scripts/bench_client.py --build build-bench [--reps 3] [--no-pin] [--sections …] [--engines …]
Pinned (default): servers on CPU 1, clients and floor_pacer on CPU 0 (taskset).
Writes DIR/raw.jsonl (default DIR: <build>/bench-results/<name>-<date>) and DIR/summary.md.
"""

import argparse
import glob
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

MODEL = "m"


def floor_server_argv(paths, port, gap_us=0, first_us=None, per_write=1, stamp="none", grid=False):
    return [paths.floor_sse_server, "--port", str(port), "--events", "0", "--gap-us", str(gap_us),
            "--first-us", str(gap_us if first_us is None else first_us), "--per-write", str(per_write),
            "--stamp", stamp, "--model", MODEL, "--keep", "--limit-s", "600"] + (["--grid"] if grid else [])


def sim_argv(paths, port, ttft_ms, itl_ms, trace_path=None):
    return [paths.servebench, "sim", "--port", str(port), "--served-model-name", MODEL,
            "--ttft-ms", "%g" % ttft_ms, "--itl-ms", "%g" % itl_ms] + (["--trace-out", trace_path] if trace_path else [])


def run_argv(paths, port, outdir, tag, num_prompts, output_len, engine, concurrency=None, rate="inf",
             burstiness=None):
    argv = [paths.servebench, "run", "--base-url", "http://127.0.0.1:%d" % port, "--model", MODEL,
            "--dataset-name", "random", "--random-input-len", "16", "--random-output-len", str(output_len),
            "--num-prompts", str(num_prompts), "--request-rate", str(rate), "--ignore-eos",
            "--temperature", "0", "--disable-tqdm", "--seed", "1",
            "--save-result", "--result-dir", outdir, "--result-filename", tag + ".result.json",
            "--records", os.path.join(outdir, tag + ".records.jsonl"),
            "--request-id-prefix", tag + "-", "--http-engine", engine.split("+")[0],
            # The floor server answers every path with a stream: no /metrics to look for.
            "--server-metrics", "off"]
    if concurrency:
        argv += ["--max-concurrency", str(concurrency)]
    if burstiness:
        argv += ["--burstiness", str(burstiness)]
    if engine.endswith("+read"):  # chunk times taken when read, not the kernel's receive stamps
        argv += ["--arrival-clock", "read"]
    return argv


def reader_argv(paths, port, conns, requests, tokens, parse=1, stagger_us=0):
    return [paths.floor_reader, "--port", str(port), "--conns", str(conns), "--requests", str(requests),
            "--max-tokens", str(tokens), "--model", MODEL, "--parse", str(parse), "--limit-s", "150"] + (
                ["--stagger-us", str(stagger_us)] if stagger_us else [])


def load_result(outdir, tag):
    path = os.path.join(outdir, tag + ".result.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read().strip().splitlines()
    return json.loads(text[-1]) if text else None


def with_floor_server(paths, argv_fn, pinned, outdir, tag, client_fn):
    """Starts a floor_sse_server, runs client_fn(port), stops the server; returns (client
    result, server stats line)."""
    port = bl.free_port()
    srv = bl.Server(argv_fn(port), port, pinned, os.path.join(outdir, tag + ".server.log"))
    try:
        res = client_fn(port)
    finally:
        out = srv.stop()
    return res, (bl.kv_line(out, "floor_sse_server: requests") or {})


def client_cpu_row(section, kind, rep, tag, res, server, result):
    events = server.get("events") or 0
    row = {"section": section, "kind": kind, "rep": rep, "tag": tag, "cmd": res["cmd"], "rc": res["rc"],
           "events": events, "requests": server.get("requests"), "wall_s": res["wall_s"],
           "proc_cpu_s": res["user_s"] + res["sys_s"], "maxrss_kb": res["maxrss_kb"]}
    row["proc_us_per_event"] = row["proc_cpu_s"] * 1e6 / events if events else None
    if kind == "floor":
        rd = bl.kv_line(res["out"], "floor_reader:") or {}
        row["reader"] = rd
        row["inrun_cpu_s"] = (rd.get("cpu_user_s", 0) + rd.get("cpu_sys_s", 0)) if rd else None
        row["requests_per_s"] = rd.get("requests_done", 0) / rd["wall_s"] if rd.get("wall_s") else None
    else:
        client = ((result or {}).get("servebench") or {}).get("client") or {}
        if client:
            row["inrun_cpu_s"] = client.get("cpu_user_s", 0) + client.get("cpu_system_s", 0)
        row["client"] = client
        if result:
            row["completed"] = result.get("completed")
            row["failed"] = result.get("failed")
            row["requests_per_s"] = result.get("request_throughput")
            row["max_concurrent_requests"] = result.get("max_concurrent_requests")
    if row.get("inrun_cpu_s") is not None and events:
        row["inrun_us_per_event"] = row["inrun_cpu_s"] * 1e6 / events
    if res["rc"] != 0:
        row["problem"] = "rc=%s: %s" % (res["rc"], res["out"][-600:])
    bl.log("%-8s %-10s %-5s rep %d: events=%d proc %.2f µs/event in-run %s µs/event%s" % (
        section, tag.split("-")[1] if "-" in tag else "", kind, rep, events, row["proc_us_per_event"] or float("nan"),
        bl.fmt(row.get("inrun_us_per_event")), ("  PROBLEM " + row["problem"][:300]) if "problem" in row else ""))
    return row


# ---------------------------------------------------------------- cpu and rps

CPU_CONFIGS = {
    # name: server argv options, clients: streams, requests, tokens
    # --grid: every stream ticks on one common 10 ms clock (as an engine's decode step), so the
    # clients' different request start spreads do not give them different wake-up counts.
    "paced": dict(server=dict(gap_us=10000, grid=True), conns=256, requests=512, tokens=100),
    # 8,192 requests (2.1 M events, ~0.5 s of client CPU): with 1,024 the whole run took ~0.08 s
    # of CPU and the per-repetition ratio moved between 1.24 and 1.75.
    "batched": dict(server=dict(gap_us=0, per_write=16), conns=256, requests=8192, tokens=256),
    "rps": dict(server=dict(gap_us=0), conns=64, requests=20000, tokens=1),
    # servebench sim as the server (fixed TTFT = ITL = 10 ms), each stream on its own tick from
    # its request's arrival, as the simulator does: both clients spread their first 256 requests
    # evenly over one ITL (floor_reader --stagger-us; servebench a constant rate, burstiness
    # inf), and each later request follows an ended stream. 131,072 events. The server's event
    # count is requests x tokens (the simulator prints none).
    "sim-paced": dict(sim=dict(ttft_ms=10, itl_ms=10), conns=256, requests=512, tokens=256,
                      stagger_us=10000),
}


def server_argv(paths, port, cfg):
    """The server of a CPU configuration: servebench sim, or floor_sse_server."""
    if "sim" in cfg:
        return sim_argv(paths, port, **cfg["sim"])
    return floor_server_argv(paths, port, **cfg["server"])


def client_argv(paths, port, cfg, kind, outdir, tag, engine):
    """floor_reader's or servebench's argv for a CPU configuration."""
    if kind == "floor":
        return reader_argv(paths, port, cfg["conns"], cfg["requests"], cfg["tokens"],
                           stagger_us=cfg.get("stagger_us", 0))
    if cfg.get("stagger_us"):  # the first `conns` requests evenly over the stagger
        rate = cfg["conns"] * 1e6 / cfg["stagger_us"]
        return run_argv(paths, port, outdir, tag, cfg["requests"], cfg["tokens"], engine,
                        concurrency=cfg["conns"], rate="%g" % rate, burstiness="inf")
    return run_argv(paths, port, outdir, tag, cfg["requests"], cfg["tokens"], engine, concurrency=cfg["conns"])


def cpu_section(paths, names, engines, rep, pinned, outdir, section):
    rows = []
    for name in names:
        cfg = CPU_CONFIGS[name]
        runs = [("floor", None)] + [("servebench", e) for e in engines]
        for kind, engine in (runs if rep % 2 else runs[::-1]):
            tag = "%s-%s-%s-%d" % (section, name, engine or kind, rep)

            def client(port):
                argv = client_argv(paths, port, cfg, kind, outdir, tag, engine)
                return bl.run_client(argv, pinned, timeout_s=180, log_path=os.path.join(outdir, tag + ".client.log"))

            res, server = with_floor_server(
                paths, lambda port: server_argv(paths, port, cfg), pinned, outdir, tag, client)
            if "sim" in cfg:
                server = {"events": cfg["requests"] * cfg["tokens"], "requests": cfg["requests"]}
            rows.append(client_cpu_row(section, kind, rep, tag, res, server,
                                       load_result(outdir, tag) if kind == "servebench" else None)
                        | {"config": name, "engine": engine})
    return rows


# ---------------------------------------------------------------- pacing

def pacing_servebench_row(paths, rate, engine, rep, pinned, outdir):
    n = int(rate * 2)
    tag = "pacing-%d-%s-%d" % (rate, engine, rep)

    def client(port):
        argv = run_argv(paths, port, outdir, tag, n, 1, engine, rate=rate)
        return bl.run_client(argv, pinned, timeout_s=120, log_path=os.path.join(outdir, tag + ".client.log"))

    res, server = with_floor_server(paths, lambda port: floor_server_argv(paths, port), pinned, outdir, tag, client)
    lag = []
    rec_path = os.path.join(outdir, tag + ".records.jsonl")
    if os.path.exists(rec_path):
        for r in bl.read_jsonl(rec_path):
            if not r.get("warmup") and r.get("sent_ns", -1) >= 0 and r.get("intended_ns", -1) >= 0:
                lag.append(abs(r["sent_ns"] - r["intended_ns"]))
    row = {"section": "pacing", "kind": "servebench", "engine": engine, "rate": rate, "rep": rep, "tag": tag,
           "rc": res["rc"], "cmd": res["cmd"], "late_us": bl.pcts_us(lag), "records": len(lag),
           "proc_cpu_s": res["user_s"] + res["sys_s"], "wall_s": res["wall_s"]}
    if res["rc"] != 0 or len(lag) != n:
        row["problem"] = "rc=%s, %d of %d records: %s" % (res["rc"], len(lag), n, res["out"][-400:])
    bl.log("pacing %6d/s rep %d %-6s: p50/p99/p99.9 %s/%s/%s µs%s" % (
        rate, rep, engine, *(bl.fmt(row["late_us"].get(p)) for p in (50, 99, 99.9)),
        ("  PROBLEM " + row["problem"][:300]) if "problem" in row else ""))
    return row


def pacing_section(paths, rates, engines, rep, pinned, outdir):
    rows = []
    for rate in rates:
        for engine in engines:
            rows.append(pacing_servebench_row(paths, rate, engine, rep, pinned, outdir))
        argv = [paths.floor_pacer, "--rate", str(rate), "--seconds", "2", "--dist", "poisson"]
        rows.append(floor_pacer_row(bl.run_client(argv, pinned, timeout_s=30), "floor", rate, rep))
        # The same schedule, sending each request to a floor server and reading the answers on
        # the one thread: the floor of pacing for a client that does the load's work.
        res, _ = with_floor_server(
            paths, lambda port: floor_server_argv(paths, port), pinned, outdir, "pacing-%d-floor-send-%d" % (rate, rep),
            lambda port: bl.run_client(argv + ["--send-port", str(port), "--model", MODEL], pinned, timeout_s=60))
        rows.append(floor_pacer_row(res, "floor-send", rate, rep))
    return rows


def floor_pacer_row(res, kind, rate, rep):
    kv = bl.kv_line(res["out"], "floor_pacer:") or {}
    row = {"section": "pacing", "kind": kind, "rate": rate, "rep": rep, "cmd": res["cmd"],
           "late_us": {50: kv.get("late_us_p50"), 99: kv.get("late_us_p99"), 99.9: kv.get("late_us_p999"),
                       "max": kv.get("late_us_max"), "n": kv.get("late_n")},
           "cpu_pct": kv.get("cpu_pct"), "connections": kv.get("connections")}
    bl.log("pacing %6d/s rep %d %-10s: p50/p99/p99.9 %s/%s/%s µs" % (
        rate, rep, kind, *(bl.fmt(row["late_us"].get(p)) for p in (50, 99, 99.9))))
    return row


# ---------------------------------------------------------------- 10k streams

def streams_section(paths, engines, rep, pinned, outdir):
    rows = []
    n = 10000
    for kind, engine in [("floor", None)] + [("servebench", e) for e in engines]:
        tag = "streams-10k-%s-%d" % (engine or kind, rep)

        def client(port):
            if kind == "floor":
                argv = reader_argv(paths, port, n, n, 10)
            else:
                argv = run_argv(paths, port, outdir, tag, n, 10, engine, concurrency=n)
            return bl.run_client(argv, pinned, timeout_s=240, log_path=os.path.join(outdir, tag + ".client.log"))

        res, server = with_floor_server(paths, lambda port: floor_server_argv(paths, port, gap_us=500000),
                                        pinned, outdir, tag, client)
        row = client_cpu_row("streams", kind, rep, tag, res, server,
                             load_result(outdir, tag) if kind == "servebench" else None)
        row["server_peak_streams"] = server.get("peak_streams")
        row["engine"] = engine
        rows.append(row)
    return rows


# ---------------------------------------------------------------- measurement error

def read_trace(path):
    """request id -> list of send ns per token, from the simulator's --trace-out JSONL."""
    out = {}
    for rec in bl.read_jsonl(path):
        rid = rec.get("request_id")
        sends = rec.get("sent_ns")
        if rid is not None and sends:
            out[str(rid)] = sends
    return out


def error_servebench_row(paths, streams, engine, rep, pinned, outdir):
    """servebench's chunk arrival times against the simulator's ground truth."""
    tag = "error-%d-%s-%d" % (streams, engine, rep)
    port = bl.free_port()
    trace = os.path.join(outdir, tag + ".trace.jsonl")
    srv = bl.Server(sim_argv(paths, port, 10, 10, trace), port, pinned, os.path.join(outdir, tag + ".server.log"))
    try:
        res = bl.run_client(run_argv(paths, port, outdir, tag, 2 * streams, 100, engine, concurrency=streams),
                            pinned, timeout_s=180, log_path=os.path.join(outdir, tag + ".client.log"))
    finally:
        srv.stop()
    result = load_result(outdir, tag) or {}
    t0 = (result.get("servebench") or {}).get("t0_mono_ns")
    if t0 is None:
        t0 = ((result.get("servebench") or {}).get("client") or {}).get("t0_mono_ns")
    delays, first, gap_err = [], [], []
    problem = None
    if t0 is None:
        problem = "the result JSON carries no t0_mono_ns: cannot align client and server clocks"
    elif not os.path.exists(trace):
        problem = "no trace file written"
    else:
        sends = read_trace(trace)
        matched = 0
        for r in bl.read_jsonl(os.path.join(outdir, tag + ".records.jsonl")):
            s = sends.get(r.get("request_id"))
            if r.get("warmup") or not s:
                continue
            matched += 1
            c = r.get("chunk_ns") or []
            for i in range(min(len(c), len(s))):
                d = c[i] + t0 - s[i]
                delays.append(d)
                if i == 0:
                    first.append(d)
                else:
                    gap_err.append(abs((c[i] - c[i - 1]) - (s[i] - s[i - 1])))
        if matched == 0:
            problem = "no record matched a trace entry by request id"
    row = {"section": "error", "kind": "servebench", "engine": engine, "streams": streams, "rep": rep, "tag": tag,
           "rc": res["rc"], "cmd": res["cmd"], "delay_us": bl.pcts_us(delays), "ttft_err_us": bl.pcts_us(first),
           "itl_err_us": bl.pcts_us(gap_err), "negative": sum(1 for d in delays if d < 0)}
    if problem or res["rc"] != 0:
        row["problem"] = problem or ("rc=%s: %s" % (res["rc"], res["out"][-400:]))
    bl.log("error %4d streams rep %d %-6s: delay p50/p99 %s/%s µs%s" % (
        streams, rep, engine, bl.fmt(row["delay_us"].get(50)), bl.fmt(row["delay_us"].get(99)),
        ("  PROBLEM " + row["problem"][:300]) if "problem" in row else ""))
    return row


def error_section(paths, streams_list, engines, rep, pinned, outdir):
    rows = []
    for streams in streams_list:
        for engine in engines:
            rows.append(error_servebench_row(paths, streams, engine, rep, pinned, outdir))
        # floor: one-way delay of stamped events, same streams and ITL
        ftag = "error-%d-floor-%d" % (streams, rep)

        def client(port):
            return bl.run_client(reader_argv(paths, port, streams, 2 * streams, 100, parse=2), pinned, timeout_s=180,
                                 log_path=os.path.join(outdir, ftag + ".client.log"))

        fres, server = with_floor_server(paths, lambda port: floor_server_argv(paths, port, gap_us=10000, stamp="send"),
                                         pinned, outdir, ftag, client)
        rd = bl.kv_line(fres["out"], "floor_reader:") or {}
        rows.append({"section": "error", "kind": "floor", "streams": streams, "rep": rep, "tag": ftag,
                     "cmd": fres["cmd"], "rc": fres["rc"],
                     "delay_us": {50: rd.get("delay_us_p50"), 99: rd.get("delay_us_p99"), 99.9: rd.get("delay_us_p999"),
                                  "max": rd.get("delay_us_max"), "n": rd.get("delay_n")},
                     "server_late_us": {50: server.get("send_late_us_p50"), 99: server.get("send_late_us_p99")}})
        bl.log("error %4d streams rep %d floor : delay p50/p99 %s/%s µs" % (
            streams, rep, bl.fmt(rd.get("delay_us_p50")), bl.fmt(rd.get("delay_us_p99"))))
    return rows


# ---------------------------------------------------------------- summary

def summarize(rows, info, engines):
    out = ["# bench_client: servebench run vs the floor\n",
           "machine: %s, %s CPUs (%s), kernel %s, clocksource %s; run %s; git %s; load at start: %s\n" % (
               info["cpu"], info["cpus"], info["hypervisor"], info["kernel"], info["clocksource"],
               info["date_utc"], info["git"], info["loadavg_at_start"])]

    def sel(**kw):
        return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]

    def paired_ratio(a_rows, b_rows, key):
        pairs = [(a.get(key), b.get(key)) for a, b in zip(sorted(a_rows, key=lambda r: r["rep"]),
                                                          sorted(b_rows, key=lambda r: r["rep"]))]
        return bl.median([b / a for a, b in pairs if a and b])

    t = []
    for name, engine in ((n, e) for n in CPU_CONFIGS for e in engines):
        f = sel(section="cpu", config=name, kind="floor")
        s = sel(section="cpu", config=name, kind="servebench", engine=engine)
        if not f and not s:
            continue
        r_proc = paired_ratio(f, s, "proc_us_per_event")
        r_in = paired_ratio(f, s, "inrun_us_per_event")
        t.append([name, engine, "%d/%d" % (len(f), len(s)), bl.median([r["proc_us_per_event"] for r in f]),
                  bl.median([r["proc_us_per_event"] for r in s]), r_proc,
                  bl.median([r.get("inrun_us_per_event") for r in f]), bl.median([r.get("inrun_us_per_event") for r in s]),
                  r_in, bl.median([r.get("requests_per_s") for r in f]), bl.median([r.get("requests_per_s") for r in s]),
                  bl.verdict(r_in if r_in == r_in else r_proc, 1.3)])
    if t:
        out.append("\n## Client CPU per streamed token (server: floor_sse_server; sim-paced: servebench sim)\n\n" + bl.table(
            ["config", "engine", "reps floor/sb", "floor_reader µs/event (process)", "servebench µs/event (process)",
             "ratio (process)", "floor_reader µs/event (in-run)", "servebench µs/event (in-run)", "ratio (in-run)",
             "floor req/s", "servebench req/s", "≤ 1.3×"], t))

    t = []
    for rate, engine in ((x, e) for x in sorted({r["rate"] for r in sel(section="pacing")}) for e in engines):
        f = sel(section="pacing", rate=rate, kind="floor")
        fs = sel(section="pacing", rate=rate, kind="floor-send")
        s = sel(section="pacing", rate=rate, kind="servebench", engine=engine)
        cells = [rate, engine, "%d/%d" % (len(f), len(s))]
        for p in (50, 99, 99.9):
            fm = bl.median([r["late_us"].get(p) for r in f])
            sm = bl.median([r["late_us"].get(p) for r in s])
            cells += [fm, sm, sm / fm if fm else float("nan")]
        verdict = bl.verdict(cells[-4], 2.0) + " (p99)"
        fsm = bl.median([r["late_us"].get(99) for r in fs])
        cells += [fsm, cells[7] / fsm if fsm else float("nan"), verdict]
        t.append(cells)
    if t:
        out.append("\n## Pacing error |sent − intended| (µs), Poisson, 2 s per rate\n\n"
                   "floor: floor_pacer (timerfd + 50 µs spin, no sends); sending floor: floor_pacer --send-port "
                   "(the same, sending each request to floor_sse_server and reading the answers, one thread).\n\n" + bl.table(
            ["rate/s", "engine", "reps", "floor p50", "sb p50", "×", "floor p99", "sb p99", "×", "floor p99.9", "sb p99.9", "×",
             "sending floor p99", "sb p99 ×", "≤ 2× floor"], t))

    t = []
    for r in sel(section="streams"):
        t.append([r.get("engine") or r["kind"], r["rep"], r.get("server_peak_streams"), r.get("max_concurrent_requests", "n/a"),
                  r.get("completed", (r.get("reader") or {}).get("requests_done")),
                  r.get("failed", (r.get("reader") or {}).get("failed")), r["wall_s"], r["maxrss_kb"] / 1024,
                  r.get("proc_us_per_event"), "problem" in r and "yes" or "no"])
    if t:
        out.append("\n## 10,000 concurrent streams from one process (floor_sse_server, 500 ms ITL, 10 tokens)\n\n" + bl.table(
            ["client", "rep", "server peak open streams", "client peak concurrent", "completed", "failed", "wall s",
             "max RSS MiB", "CPU µs/event (process)", "problem"], t))

    t = []
    for streams, engine in ((x, e) for x in sorted({r["streams"] for r in sel(section="error")}) for e in engines):
        f = sel(section="error", streams=streams, kind="floor")
        s = sel(section="error", streams=streams, kind="servebench", engine=engine)
        cells = [streams, engine, "%d/%d" % (len(f), len(s))]
        for p in (50, 99, 99.9):
            fm = bl.median([r["delay_us"].get(p) for r in f])
            sm = bl.median([r["delay_us"].get(p) for r in s])
            cells += [fm, sm, sm / fm if fm else float("nan")]
        cells += [bl.median([r["ttft_err_us"].get(99) for r in s]), bl.median([r["itl_err_us"].get(99) for r in s])]
        cells.append(bl.verdict(cells[8], 1.5) + " (p99)")
        t.append(cells)
    if t:
        out.append("\n## Timing error: arrival − server send time (µs), 10 ms ITL, aligned ticks\n\n" + bl.table(
            ["streams", "engine", "reps", "floor one-way p50", "sb error p50", "×", "floor p99", "sb p99", "×", "floor p99.9",
             "sb p99.9", "×", "sb TTFT err p99", "sb ITL gap err p99", "≤ 1.5×"], t))

    problems = [r for r in rows if "problem" in r]
    if problems:
        out.append("\nProblems:\n" + "\n".join("- %s %s %s rep %s: %s" % (
            r["section"], r.get("config", r.get("rate", r.get("streams", ""))), r["kind"], r["rep"],
            r["problem"][:300].replace("\n", " ")) for r in problems) + "\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-pin", action="store_true")
    ap.add_argument("--sections", default="cpu,rps,pacing,streams,error")
    ap.add_argument("--rates", default="1000,10000,50000")
    ap.add_argument("--error-streams", default="256,1000")
    ap.add_argument("--engines", default="http1,curl", help="servebench --http-engine values to measure")
    ap.add_argument("--out", default=None)
    ap.add_argument("--fifo", action="store_true", help="servers and clients at SCHED_FIFO (benchlib.set_fifo)")
    args = ap.parse_args()
    bl.set_fifo(args.fifo)
    paths = bl.Paths(args.build)
    paths.require("servebench", "floor_sse_server", "floor_reader", "floor_pacer")
    sections = [s for s in args.sections.split(",") if s]
    known = {"cpu", "rps", "pacing", "streams", "error"}
    if set(sections) - known:
        raise SystemExit("error: --sections: unknown %s (known: %s)" % (sorted(set(sections) - known), sorted(known)))
    outdir = args.out or os.path.join(paths.build, "bench-results", "client-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(outdir, exist_ok=True)
    info = bl.machine_info()
    pinned = not args.no_pin
    engines = [e for e in args.engines.split(",") if e]
    rows = []
    with open(os.path.join(outdir, "raw.jsonl"), "a") as raw:
        def keep(new):
            for r in new:
                r["machine"] = info
                rows.append(r)
                raw.write(json.dumps(r, default=str) + "\n")
            raw.flush()

        for rep in range(1, args.reps + 1):
            if "cpu" in sections:
                keep(cpu_section(paths, ["paced", "batched", "sim-paced"], engines, rep, pinned, outdir, "cpu"))
            if "rps" in sections:
                keep(cpu_section(paths, ["rps"], engines, rep, pinned, outdir, "cpu"))
            if "pacing" in sections:
                keep(pacing_section(paths, [int(x) for x in args.rates.split(",")], engines, rep, pinned, outdir))
            if "streams" in sections:
                keep(streams_section(paths, engines, rep, pinned, outdir))
            if "error" in sections:
                keep(error_section(paths, [int(x) for x in args.error_streams.split(",")], engines, rep, pinned, outdir))
            # records and traces are large; keep only the last repetition's
            if rep < args.reps:
                for p in glob.glob(os.path.join(outdir, "*-%d.records.jsonl" % rep)) + \
                        glob.glob(os.path.join(outdir, "*-%d.trace.jsonl" % rep)):
                    os.remove(p)
    text = summarize(rows, info, engines)
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    print("raw lines and logs in %s" % os.path.abspath(outdir))


if __name__ == "__main__":
    main()
