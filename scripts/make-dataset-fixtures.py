#!/usr/bin/env python3
"""Writes the small dataset fixtures under tests/fixtures/datasets/ (committed; run again only
to change them). Everything is generated from a fixed seed and a made-up word list: no text is
copied from any real dataset. Usage: scripts/make-dataset-fixtures.py [OUT_DIR]

  sharegpt.json   ShareGPT format: rows that vLLM's filters keep and rows they drop
                  (one turn, prompt < 4 or > 1024 tokens, reply < 4, together > 2048),
                  JSON escapes and non-ASCII text
  custom.jsonl    vLLM's custom format: {"prompt", "output_tokens"}, one blank line
  mooncake.jsonl  Mooncake trace format: ms timestamps, hash_ids of 512-token blocks, shared
                  leading blocks between rows
  azure.csv       Azure LLM inference trace format: TIMESTAMP,ContextTokens,GeneratedTokens
  verses.txt      sonnet-style lines
"""
import json
import os
import random
import sys

WORDS = ("alpha bravo cobalt delta ember fjord garnet harbor indigo jasper kelvin lumen "
         "meadow nectar onyx prism quartz raven sierra tundra umber vector willow xenon "
         "yonder zephyr").split()


def words(rng, n):
    # Each word and each punctuation mark is one token of servebench's built-in word rule.
    return " ".join(rng.choice(WORDS) for _ in range(n))


def sharegpt(rng):
    rows = []
    # Kept by vLLM: prompt 4..1024 tokens, reply >= 4, together <= 2048.
    for i in range(40):
        turns = [{"from": "human", "value": words(rng, rng.randint(4, 120))},
                 {"from": "gpt", "value": words(rng, rng.randint(4, 200))}]
        for _ in range(rng.randint(0, 3)):  # later turns are ignored
            turns.append({"from": "human", "value": words(rng, 5)})
        rows.append({"id": f"keep-{i}", "conversations": turns})
    rows[3]["conversations"][0]["value"] = 'Say "caf\u00e9" twice,\nthen \\ stop'
    rows[4]["conversations"][0]["value"] = "na\u00efve \u65e5\u672c tea cup"
    # Dropped before the shuffle: fewer than two turns, or no conversations at all.
    rows.append({"id": "one-turn", "conversations": [{"from": "human", "value": words(rng, 9)}]})
    rows.append({"id": "no-conversations"})
    # Dropped by is_valid_sequence.
    rows.append({"id": "short-prompt", "conversations": [
        {"from": "human", "value": "hi there"}, {"from": "gpt", "value": words(rng, 20)}]})
    rows.append({"id": "short-reply", "conversations": [
        {"from": "human", "value": words(rng, 20)}, {"from": "gpt", "value": "ok"}]})
    rows.append({"id": "long-prompt", "conversations": [
        {"from": "human", "value": words(rng, 1100)}, {"from": "gpt", "value": words(rng, 20)}]})
    rows.append({"id": "long-total", "conversations": [
        {"from": "human", "value": words(rng, 1000)}, {"from": "gpt", "value": words(rng, 1100)}]})
    rng.shuffle(rows)
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"


def custom(rng):
    lines = []
    for i in range(24):
        lines.append(json.dumps({"prompt": f"Question {i}: " + words(rng, rng.randint(3, 40)),
                                 "output_tokens": rng.randint(4, 64)}))
        if i == 11:
            lines.append("")
    return "\n".join(lines) + "\n"


def mooncake(rng):
    lines, t = [], 0
    next_block = 1000
    shared = [[1, 2], [10, 11, 12]]  # leading blocks that several rows share
    for i in range(30):
        t += rng.choice([0, 20, 40, 80, 150])
        prefix = list(shared[i % 2]) if i % 3 else []
        n_blocks = len(prefix) + rng.randint(1, 2)
        ids = prefix + list(range(next_block, next_block + n_blocks - len(prefix)))
        next_block += n_blocks
        input_length = (n_blocks - 1) * 512 + rng.randint(1, 512)
        lines.append(json.dumps({"timestamp": t, "input_length": input_length,
                                 "output_length": rng.randint(2, 30), "hash_ids": ids}))
    return "\n".join(lines) + "\n"


def azure(rng):
    out = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    ticks = 0  # 100 ns units after 18:15:46
    for i in range(30):
        ticks += rng.randint(0, 1_000_000)  # up to 0.1 s apart
        seconds, frac = divmod(ticks, 10_000_000)
        stamp = f"2023-11-16 18:{15 + (46 + seconds) // 60:02d}:{(46 + seconds) % 60:02d}.{frac:07d}"
        if i == 7:
            stamp = f'"{stamp}"'  # a quoted field, as CSV writers may emit
        out.append(f"{stamp},{rng.randint(20, 900)},{rng.randint(1, 40)}")
    return "\r\n".join(out) + "\r\n"


def verses(rng):
    lines = []
    for i in range(40):
        line = words(rng, rng.randint(5, 9)).capitalize()
        lines.append(line + ("." if i % 4 == 3 else ","))
    return "\n".join(lines) + "\n"


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests/fixtures/datasets")
    os.makedirs(out_dir, exist_ok=True)
    for name, make in (("sharegpt.json", sharegpt), ("custom.jsonl", custom),
                       ("mooncake.jsonl", mooncake), ("azure.csv", azure),
                       ("verses.txt", verses)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="") as f:
            f.write(make(random.Random(name)))


if __name__ == "__main__":
    main()
