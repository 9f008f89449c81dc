#!/usr/bin/python3
"""Checks a merged sharded result against the same run unsharded: same request count, same
token totals, every shard present; median TTFT and E2EL within a generous tolerance (shared,
noisy machines).  usage: compare_results.py MERGED.json UNSHARDED.json SHARDS"""
import json
import sys


def main():
    merged = json.load(open(sys.argv[1]))
    whole = json.load(open(sys.argv[2]))
    shards = int(sys.argv[3])
    for key in ["completed", "failed", "total_input_tokens", "total_output_tokens"]:
        assert merged[key] == whole[key], f"{key}: merged {merged[key]} != unsharded {whole[key]}"
    block = merged["servebench"]["merge"]
    assert block["present"] == list(range(shards)) and not block["partial"], block
    for key in ["median_ttft_ms", "median_e2el_ms"]:
        if key in whole:
            a, b = merged[key], whole[key]
            assert abs(a - b) <= 0.5 * b + 20, f"{key}: merged {a} vs unsharded {b}"
    print(f"merged {shards} shards: {merged['completed']} requests, "
          f"{merged['total_output_tokens']} output tokens, as unsharded")


if __name__ == "__main__":
    main()
