#!/usr/bin/env python3
"""A/B of `run --live` against the plain progress bar, both in a terminal (a detached tmux
session each), alternating inside every repetition, against the embedded simulator: does the
live view move what is measured or what the client spends?

  bench/scripts/ab_live.py --build build --reps 5 --rate 100 --prompts 1000

Prints, per arm, the median over repetitions of: p99 schedule lag (sent - intended), max
event-loop lag, P99 ITL, and the client's CPU seconds (result JSON).
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def run_in_tmux(binary, args, outdir, name):
    socket = "servebench-ab-live-%d" % os.getpid()
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    done = os.path.join(outdir, name + ".done")
    cmd = " ".join([binary] + args + ["--result-dir", outdir, "--result-filename", name + ".json",
                                      "--save-result", ">/dev/tty", "2>&1;", "touch", done])
    env = {k: v for k, v in os.environ.items() if k != "TMUX"}
    subprocess.run(tmux + ["new-session", "-d", "-x", "120", "-y", "50", cmd], check=True, env=env)
    while not os.path.exists(done):
        time.sleep(0.2)
    subprocess.run(tmux + ["kill-server"], env=env, stderr=subprocess.DEVNULL)
    with open(os.path.join(outdir, name + ".json")) as f:
        return json.load(f)


def figures(r):
    sb = r["servebench"]
    return {
        "p99 schedule lag (ms)": sb["schedule_lag_ms"]["p99"],
        "max loop lag (ms)": sb["client"]["max_loop_lag_ms"],
        "P99 ITL (ms)": r["p99_itl_ms"],
        "client CPU (s)": sb["client"]["cpu_user_s"] + sb["client"]["cpu_system_s"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rate", default="100")
    ap.add_argument("--prompts", default="1000")
    args = ap.parse_args()
    binary = os.path.abspath(os.path.join(args.build, "servebench"))
    base = ["run", "--num-prompts", args.prompts, "--request-rate", args.rate, "--random-input-len",
            "32", "--random-output-len", "32", "--sim-ttft-ms", "20", "--sim-itl-ms", "5",
            "--percentile-metrics", "ttft,itl", "--metric-percentiles", "50,99", "--seed", "1"]
    arms = {"bar": base, "live": base + ["--live"]}
    got = {name: [] for name in arms}
    print("load average at the start: %s" % open("/proc/loadavg").read().strip())
    with tempfile.TemporaryDirectory() as outdir:
        for rep in range(args.reps):
            order = list(arms) if rep % 2 == 0 else list(reversed(arms))
            for name in order:
                got[name].append(figures(run_in_tmux(binary, arms[name], outdir, "%s-%d" % (name, rep))))
    for name, runs in got.items():
        print(name + ": " + ", ".join("%s %.3f" % (k, statistics.median(r[k] for r in runs)) for k in runs[0]))


if __name__ == "__main__":
    main()
