#!/usr/bin/env python3
"""A/B of client builds: floor_reader and several servebench binaries, alternating inside every
repetition (in alternating order), on one CPU configuration of bench_client.py ("batched",
"paced" or "sim-paced"). For changes whose effect is smaller than the machine's drift between
separate harness runs.

  bench/scripts/ab_client.py --build build --config batched --reps 15 old=/path/servebench new=build/servebench

Prints, per client, the median in-run CPU (result JSON servebench.client.cpu_*; floor_reader's
own figure), the ratio of medians to the floor's, and the per-repetition ratios.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
import bench_client as bc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--config", choices=["batched", "paced", "sim-paced"], default="batched")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--fifo", action="store_true", help="servers and clients at SCHED_FIFO (benchlib.set_fifo)")
    ap.add_argument("clients", nargs="+", help="NAME=SERVEBENCH_BINARY")
    args = ap.parse_args()
    bl.set_fifo(args.fifo)
    paths = bl.Paths(args.build)
    cfg = bc.CPU_CONFIGS[args.config]
    clients = [c.split("=", 1) for c in args.clients]
    cpu = {"floor": []} | {name: [] for name, _ in clients}
    print("load average at the start: %s" % open("/proc/loadavg").read().strip())
    with tempfile.TemporaryDirectory() as outdir:
        port = bl.free_port()
        # sim-paced: the --build's simulator serves every client.
        server = bl.Server(bc.server_argv(paths, port, cfg), port, True, os.path.join(outdir, "server.log"))
        try:
            for rep in range(args.reps):
                # Each repetition in the other order (floor, A, B; then B, A, floor), so that a drift
                # of the machine within a repetition favours no one.
                order = [("floor", None)] + clients
                for name, binary in (order if rep % 2 == 0 else order[::-1]):
                    if name == "floor":
                        res = bl.run_client(bc.client_argv(paths, port, cfg, "floor", outdir, None, None), True,
                                            timeout_s=180)
                        line = bl.kv_line(res["out"], "floor_reader:")
                        cpu["floor"].append(float(line["cpu_user_s"]) + float(line["cpu_sys_s"]))
                        continue
                    paths.servebench = os.path.abspath(binary)
                    tag = "%s-%d" % (name, rep)
                    argv = bc.client_argv(paths, port, cfg, "servebench", outdir, tag, "http1")
                    bl.run_client(argv, True, timeout_s=180)
                    client = bc.load_result(outdir, tag)["servebench"]["client"]
                    cpu[name].append(client["cpu_user_s"] + client["cpu_system_s"])
                    os.remove(os.path.join(outdir, tag + ".records.jsonl"))
        finally:
            server.stop()
    print("load average at the end: %s" % open("/proc/loadavg").read().strip())
    floor = statistics.median(cpu["floor"])
    for name, values in cpu.items():
        ratios = " ".join("%.2f" % (v / f) for v, f in zip(values, cpu["floor"]))
        print("%-10s median %.3f s  ratio of medians %.2f  per repetition: %s" % (
            name, statistics.median(values), statistics.median(values) / floor, ratios))


if __name__ == "__main__":
    main()
