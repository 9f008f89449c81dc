#!/usr/bin/python3
"""`servebench merge` against a real run: one embedded-simulator run, split into 3 shards by
index modulo 3 (split_run.py), merged; the merged result must carry the unsharded run's counts,
token totals, duration and percentiles. A missing shard must be a one-line error naming it, and
--partial must merge the rest.  usage: merge_split_run_test.py SERVEBENCH"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = ["completed", "failed", "total_input_tokens", "total_output_tokens", "duration",
        "request_throughput", "output_throughput", "max_concurrent_requests"]


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)
    return p


def main():
    sb = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        whole = os.path.join(tmp, "whole")
        p = run([sb, "run", "--num-prompts", "90", "--random-input-len", "32",
                 "--random-output-len", "16", "--sim-ttft-ms", "20", "--sim-itl-ms", "2",
                 "--request-rate", "300", "--save-result", "--result-dir", whole,
                 "--records", os.path.join(whole, "run.records.jsonl"), "--disable-tqdm",
                 "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles",
                 "50,90,99"])
        assert p.returncode == 0, p.stderr
        result_path = [f for f in glob.glob(os.path.join(whole, "*.json"))][0]
        ref = json.load(open(result_path))
        shards = os.path.join(tmp, "shards")
        subprocess.check_call([sys.executable, os.path.join(HERE, "split_run.py"), result_path,
                               "3", shards])
        out = os.path.join(tmp, "merged.json")
        p = run([sb, "merge", shards, "-o", out])
        assert p.returncode == 0, p.stderr
        assert "Serving Benchmark Result" in p.stdout and "Shards" in p.stdout, p.stdout
        merged = json.load(open(out))
        for key in KEYS:
            assert abs(merged[key] - ref[key]) <= 1e-9 * max(1, abs(ref[key])), \
                f"{key}: merged {merged[key]} != unsharded {ref[key]}"
        pkeys = [k for k in ref if k.startswith(("mean_", "median_", "p", "std_"))
                 and k.endswith("_ms")]
        assert len(pkeys) >= 16, pkeys
        for key in pkeys:
            assert abs(merged[key] - ref[key]) <= 1e-9 * max(1, abs(ref[key])), \
                f"{key}: merged {merged[key]} != unsharded {ref[key]}"
        block = merged["servebench"]["merge"]
        assert block["present"] == [0, 1, 2] and not block["partial"], block
        assert sum(s["requests_sent"] for s in block["shards"]) == 90, block["shards"]
        # Every report layout reads the merged result.
        p = run([sb, "report", out, "--format", "vllm-md"])
        assert p.returncode == 0 and "| merged" in p.stdout, p.stdout + p.stderr
        # A missing shard: one line naming it; --partial merges the rest.
        part = os.path.join(tmp, "part")
        subprocess.check_call([sys.executable, os.path.join(HERE, "split_run.py"), result_path,
                               "3", part, "--drop", "1"])
        p = run([sb, "merge", part, "-o", os.path.join(tmp, "p.json")])
        assert p.returncode != 0, p.stdout
        assert p.stderr.strip() == ("servebench: merge: shard 1 of 3 missing (plan_hash "
                                    "'split-test'); merge the others with --partial"), p.stderr
        p = run([sb, "merge", part, "--partial", "-o", os.path.join(tmp, "p.json")])
        assert p.returncode == 0, p.stderr
        pm = json.load(open(os.path.join(tmp, "p.json")))
        assert pm["servebench"]["merge"]["missing"] == [1] and pm["completed"] == 60, \
            pm["servebench"]["merge"]
    print("merge of a split real run equals the unsharded run")


if __name__ == "__main__":
    main()
