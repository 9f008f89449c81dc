#!/usr/bin/env python3
"""Harness 1: the simulator's cost per emitted token, its emission lateness, and how many streams
it holds, measured side by side with the floor server (bench/floor/floor_sse_server) in one run.

Both servers are read by the same minimal client (floor_reader), in the same configuration,
alternating floor/sim within each repetition. Server CPU is read from /proc/<pid> (sum of the
threads' schedstat on-CPU time) just before and just after the reader runs, so both servers
are measured the same way. The floor server's events carry the same number of bytes as the
simulator's (measured first from one real simulator response, then --event-bytes).

  bench/scripts/bench_sim.py --build build-bench [--reps 3] [--no-pin] [--configs a,b,…]
                             [--out DIR] [--rt PRIORITY]

Configurations (see CONFIGS): paced256 (256 streams, 10 ms ITL, first requests spread over one
ITL), deploy16 (a deployment of 16 engines, 128 streams each, 80 ms steps; deploy16phased: their
first steps spread over one step), paced1000, unpaced (TTFT = ITL = 0: as fast as the server can write), streams10k (10,000
concurrent streams, 500 ms ITL). Writes DIR/raw.jsonl (default DIR: <build>/bench-results/<name>-<date>) (one line per measurement) and
DIR/summary.md (medians over the repetitions, ratios to the floor, targets).
"""

import argparse
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

MODEL = "servebench-sim"

# name: streams, requests, tokens per request, TTFT µs, ITL µs, first-request spread µs, limit s
CONFIGS = {
    "paced256": dict(conns=256, requests=512, tokens=100, ttft_us=10000, itl_us=10000, stagger_us=10000),
    "paced1000": dict(conns=1000, requests=2000, tokens=100, ttft_us=10000, itl_us=10000, stagger_us=10000),
    "unpaced": dict(conns=256, requests=1024, tokens=256, ttft_us=0, itl_us=0, stagger_us=0),
    "streams10k": dict(conns=10000, requests=10000, tokens=10, ttft_us=500000, itl_us=500000, stagger_us=500000),
    # Issue 16: a deployment of 16 workers with 128 streams each, paced by 80 ms engine steps
    # (paced256's 25,600 tokens/s). The floor paces each stream at the same 80 ms.
    "deploy16": dict(conns=2048, requests=2048, tokens=25, ttft_us=80000, itl_us=80000, stagger_us=80000,
                     deployment="bench/deployments/replicas16.yaml"),
    # The same with the replicas' first steps spread over one step (start_phase_ms) besides the
    # step-time noise every deployment has (docs/deployments.md, "Noise").
    "deploy16phased": dict(conns=2048, requests=2048, tokens=25, ttft_us=80000, itl_us=80000, stagger_us=80000,
                           deployment="bench/deployments/replicas16-phased.yaml"),
    # The same without the frontend's output stage: each step's 128 chunks all due at once.
    "deploy16burst": dict(conns=2048, requests=2048, tokens=25, ttft_us=80000, itl_us=80000, stagger_us=80000,
                          deployment="bench/deployments/replicas16-burst.yaml"),
    # The same with the workers' phases drifting apart (steps 0-30 % longer), over 50 tokens.
    "deploy16spread": dict(conns=2048, requests=2048, tokens=50, ttft_us=80000, itl_us=80000, stagger_us=80000,
                           deployment="bench/deployments/replicas16-spread.yaml"),
}

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sim_argv(paths, port, cfg, trace_path):
    argv = [paths.servebench, "sim", "--port", str(port), "--served-model-name", MODEL]
    if cfg.get("deployment"):
        argv += ["--deployment", os.path.join(REPO, cfg["deployment"])]
    else:
        argv += ["--ttft-ms", "%g" % (cfg["ttft_us"] / 1000.0), "--itl-ms", "%g" % (cfg["itl_us"] / 1000.0)]
    if trace_path:
        argv += ["--trace-out", trace_path]
    return argv


def floor_argv(paths, port, cfg, event_bytes):
    argv = [paths.floor_sse_server, "--port", str(port), "--events", "0", "--gap-us", str(cfg["itl_us"]),
            "--first-us", str(cfg["ttft_us"]), "--stamp", "none", "--model", MODEL, "--keep", "--limit-s", "300"]
    if event_bytes:
        argv += ["--event-bytes", str(event_bytes)]
    return argv


def reader_argv(paths, port, cfg, parse=1):
    return [paths.floor_reader, "--port", str(port), "--conns", str(cfg["conns"]), "--requests",
            str(cfg["requests"]), "--max-tokens", str(cfg["tokens"]), "--model", MODEL, "--parse", str(parse),
            "--stagger-us", str(cfg["stagger_us"]), "--limit-s", "120"]


def sse_event_sizes(port, tokens=8):
    """Sizes of the SSE events ("data: …\\n\\n", chunk framing excluded) of one streamed
    completions response from the server on port, in order."""
    body = json.dumps({"model": MODEL, "prompt": "hi", "max_tokens": tokens, "ignore_eos": True, "stream": True})
    req = ("POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
           "content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(req)
    data = b""
    while b"[DONE]" not in data:
        got = s.recv(65536)
        if not got:
            break
        data += got
    s.close()
    head, _, raw = data.partition(b"\r\n\r\n")
    # de-chunk
    payload = b""
    while raw:
        size_line, _, rest = raw.partition(b"\r\n")
        n = int(size_line.split(b";")[0] or b"0", 16)
        if n == 0:
            break
        payload += rest[:n]
        raw = rest[n + 2:]
    events = [e + b"\n\n" for e in payload.split(b"\n\n") if e]
    return [len(e) for e in events], head.decode(errors="replace"), events


def trace_lateness_ns(trace_path):
    """send - due per emitted token from the simulator's --trace-out JSONL."""
    late = []
    if not trace_path or not os.path.exists(trace_path):
        return late
    for rec in bl.read_jsonl(trace_path):
        sends = rec.get("sent_ns") or []
        dues = rec.get("due_ns") or []
        for s, d in zip(sends, dues):
            late.append(s - d)
    return late


def measure(paths, kind, name, cfg, rep, pinned, outdir, event_bytes, rt=0):
    port = bl.free_port()
    tag = "%s-%s-%d" % (name, kind, rep)
    trace = os.path.join(outdir, tag + ".trace.jsonl") if kind == "sim" else None
    argv = sim_argv(paths, port, cfg, trace) if kind == "sim" else floor_argv(paths, port, cfg, event_bytes)
    # --rt: both servers and the reader at one SCHED_FIFO priority, so that a machine shared
    # with builds measures the programs rather than their neighbours (say so with the figures).
    rt_prefix = ["chrt", "-f", str(rt)] if rt else []
    srv = bl.Server(rt_prefix + argv, port, pinned, os.path.join(outdir, tag + ".server.log"))
    try:
        c0 = srv.cpu()
        b0 = bl.machine_busy()
        rd = bl.run_client(bl_reader := rt_prefix + reader_argv(paths, port, cfg), pinned, timeout_s=150)
        b1 = bl.machine_busy()
        c1 = srv.cpu()
        with open("/proc/%d/status" % srv.proc.pid) as f:
            hwm = [line.split()[1] for line in f if line.startswith("VmHWM")]
    finally:
        server_out = srv.stop()
    reader = bl.kv_line(rd["out"], "floor_reader:") or {}
    # token events: the reader's events that carry a "text" (the simulator's final usage event
    # carries none)
    events = (reader.get("events", 0) or 0) - (reader.get("no_text", 0) or 0)
    row = {
        "config": name, "kind": kind, "rep": rep, "pinned": pinned, "server_cmd": srv.cmd,
        "reader_cmd": " ".join(bl_reader), "reader_rc": rd["rc"], "reader": reader,
        "events": events,
        "server_cpu_s": (c1["sched_ns"] - c0["sched_ns"]) / 1e9,
        "server_cpu_stat_s": (c1["stat_ns"] - c0["stat_ns"]) / 1e9,
        "server_us_per_event": (c1["sched_ns"] - c0["sched_ns"]) / 1e3 / events if events else None,
        "server_vm_hwm_kb": int(hwm[0]) if hwm else None,
        "machine_busy_cores": (os.cpu_count() * (b1[0] - b0[0]) / (b1[2] - b0[2])) if b1[2] > b0[2] else None,
        "steal_cores": (os.cpu_count() * (b1[1] - b0[1]) / (b1[2] - b0[2])) if b1[2] > b0[2] else None,
    }
    if kind == "floor":
        row["floor_server"] = bl.kv_line(server_out, "floor_sse_server: requests") or {}
        fs = bl.kv_line(server_out, "floor_sse_server:") or {}
        row["late_us"] = {"p50": fs.get("send_late_us_p50"), "p99": fs.get("send_late_us_p99"),
                          "p99.9": fs.get("send_late_us_p999"), "n": fs.get("send_late_n")}
        row["peak_streams_server"] = fs.get("peak_streams")
    elif cfg["itl_us"] > 0:  # unpaced: every token is due at once, so lateness means nothing
        late = trace_lateness_ns(trace)
        row["late_us"] = bl.pcts_us(late) if late else {}
        row["trace_tokens"] = len(late)
    if kind == "sim":
        row["late_us"] = row.get("late_us", {})
        row["server_tail"] = server_out[-2000:]
    if rd["rc"] != 0 or not reader:
        row["problem"] = "reader rc=%s: %s" % (rd["rc"], rd["out"][-500:])
    bl.log("%-11s %-5s rep %d: events=%s server %.2f µs/event, reader %.2f µs/event, late p99 %s µs%s" % (
        name, kind, rep, int(events), row["server_us_per_event"] or float("nan"),
        reader.get("cpu_us_per_event", float("nan")), row["late_us"].get("p99", row["late_us"].get(99)),
        "  PROBLEM: " + row["problem"][:200] if "problem" in row else ""))
    return row


def summarize(rows, info, event_info):
    out = ["# bench_sim: simulator vs floor_sse_server (both read by floor_reader)\n",
           "machine: %s, %s CPUs (%s), kernel %s, clocksource %s; run %s; git %s; load at start: %s\n" % (
               info["cpu"], info["cpus"], info["hypervisor"], info["kernel"], info["clocksource"],
               info["date_utc"], info["git"], info["loadavg_at_start"]),
           "event bytes: %s\n" % event_info]
    by = {}
    for r in rows:
        by.setdefault((r["config"], r["kind"]), []).append(r)
    table_rows = []
    for name in CONFIGS:
        f, s = by.get((name, "floor"), []), by.get((name, "sim"), [])
        if not f and not s:
            continue
        fm = bl.median([r["server_us_per_event"] for r in f])
        sm = bl.median([r["server_us_per_event"] for r in s])
        pairs = [(a["server_us_per_event"], b["server_us_per_event"]) for a, b in zip(f, s)
                 if a["server_us_per_event"] and b["server_us_per_event"]]
        ratio = bl.median([b / a for a, b in pairs]) if pairs else float("nan")
        table_rows.append([name, "%d/%d" % (len(f), len(s)), fm, sm, ratio,
                           bl.median([r["reader"].get("events_per_s") for r in s]),
                           1e6 / sm if sm == sm and sm else float("nan"),
                           bl.median([r["late_us"].get("p50") for r in f]), bl.median([r["late_us"].get(50) for r in s]),
                           bl.median([r["late_us"].get("p99") for r in f]), bl.median([r["late_us"].get(99) for r in s]),
                           bl.median([r["reader"].get("peak_streams") for r in s]),
                           bl.median([r["server_vm_hwm_kb"] for r in s]) / 1024 if s else float("nan"),
                           bl.verdict(ratio, 1.5)])
    out.append("\n" + bl.table(
        ["config", "reps floor/sim", "floor µs/event", "sim µs/event", "ratio (median of per-rep)",
         "sim events/s seen", "sim tokens/s per core (1e6/µs)", "floor late p50 µs", "sim late p50 µs",
         "floor late p99 µs", "sim late p99 µs", "sim peak streams (reader)", "sim RSS MiB", "≤ 1.5×"],
        table_rows))
    problems = [r for r in rows if "problem" in r]
    if problems:
        out.append("\nProblems:\n" + "\n".join("- %s %s rep %d: %s" % (
            r["config"], r["kind"], r["rep"], r["problem"][:300].replace("\n", " ")) for r in problems) + "\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-pin", action="store_true", help="do not pin (default: server on CPU 1, reader on CPU 0)")
    ap.add_argument("--configs", default="paced256,unpaced,streams10k")
    ap.add_argument("--out", default=None)
    ap.add_argument("--floor-only", action="store_true", help="measure only the floor (no simulator)")
    ap.add_argument("--event-bytes", type=int, default=0, help="with --floor-only: the floor's event size")
    ap.add_argument("--rt", type=int, default=0,
                    help="run servers and reader under SCHED_FIFO at this priority (chrt -f; 0 = off)")
    args = ap.parse_args()
    paths = bl.Paths(args.build)
    paths.require("floor_sse_server", "floor_reader")
    if not args.floor_only:
        paths.require("servebench")
    names = [c for c in args.configs.split(",") if c]
    for n in names:
        if n not in CONFIGS:
            raise SystemExit("error: --configs: unknown configuration '%s' (known: %s)" % (n, ", ".join(CONFIGS)))
    outdir = args.out or os.path.join(paths.build, "bench-results", "sim-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(outdir, exist_ok=True)
    info = bl.machine_info()
    pinned = not args.no_pin

    kinds = ("floor",) if args.floor_only else ("floor", "sim")
    if args.floor_only:
        event_bytes = args.event_bytes
        event_info = "floor only, --event-bytes %d" % event_bytes
    else:
        event_bytes, event_info = calibrate(paths, outdir)
    bl.log(event_info)

    rows = []
    with open(os.path.join(outdir, "raw.jsonl"), "a") as raw:
        for rep in range(1, args.reps + 1):
            for name in names:
                order = kinds if rep % 2 else tuple(reversed(kinds))
                for kind in order:
                    row = measure(paths, kind, name, CONFIGS[name], rep, pinned, outdir, event_bytes, args.rt)
                    row["rt_priority"] = args.rt
                    row["machine"] = info
                    rows.append(row)
                    raw.write(json.dumps(row, default=str) + "\n")
                    raw.flush()
    text = summarize(rows, info, event_info)
    with open(os.path.join(outdir, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    print("raw lines and logs in %s" % os.path.abspath(outdir))


def calibrate(paths, outdir):
    """The floor's events get the simulator's event size (a middle token event)."""
    port = bl.free_port()
    srv = bl.Server(sim_argv(paths, port, dict(ttft_us=1000, itl_us=1000), None), port, False,
                    os.path.join(outdir, "calibrate.server.log"))
    try:
        sizes, head, events = sse_event_sizes(port)
    finally:
        srv.stop()
    event_bytes = sizes[len(sizes) // 2] if sizes else 0
    event_info = "simulator token event %d bytes (all events of an 8-token response: %s); floor --event-bytes %d" % (
        event_bytes, sizes, event_bytes)
    with open(os.path.join(outdir, "sim_response.txt"), "wb") as f:
        f.write(head.encode() + b"\r\n\r\n" + b"".join(events))
    return event_bytes, event_info


if __name__ == "__main__":
    main()
