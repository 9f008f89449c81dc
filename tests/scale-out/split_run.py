#!/usr/bin/python3
"""Makes a shard set out of one finished run, as `run --shard K/N` will write it: the run's
records split by request index modulo N into N directories, each with the run's result JSON plus
a `servebench.shard` block (docs/scale-out.md). Every shard gets the run's t0 and duration, so
`servebench merge` of the set must give the unsharded run's figures exactly.

usage: split_run.py RESULT.json N OUT_DIR [--plan-hash H] [--drop K]"""
import argparse
import json
import os
import socket


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("count", type=int)
    ap.add_argument("out")
    ap.add_argument("--plan-hash", default="split-test")
    ap.add_argument("--drop", type=int, action="append", default=[])
    a = ap.parse_args()
    result = json.load(open(a.result))
    records_path = result["servebench"]["records_file"]
    if not os.path.isabs(records_path) and not os.path.exists(records_path):
        records_path = os.path.join(os.path.dirname(a.result), os.path.basename(records_path))
    lines = [l for l in open(records_path) if l.strip()]
    t0_wall_ns = 1_700_000_000_000_000_000
    for k in range(a.count):
        if k in a.drop:
            continue
        d = os.path.join(a.out, f"shard-{k}")
        os.makedirs(d, exist_ok=True)
        mine = [l for l in lines if json.loads(l)["index"] % a.count == k]
        with open(os.path.join(d, "records.jsonl"), "w") as f:
            f.writelines(mine)
        shard = dict(result)
        shard["servebench"] = dict(result["servebench"])
        shard["servebench"]["records_file"] = "records.jsonl"
        shard["servebench"]["shard"] = {
            "index": k, "count": a.count, "plan_hash": a.plan_hash,
            "host": socket.gethostname(), "t0_wall_ns": t0_wall_ns, "clock_offset_ns": 0,
            "start_at_ns": t0_wall_ns, "started_late_ns": 0,
            "requests_planned": len(mine), "records_file": "records.jsonl"}
        with open(os.path.join(d, "result.json"), "w") as f:
            json.dump(shard, f)


if __name__ == "__main__":
    main()
