#!/usr/bin/python3
"""Writes the numpy draws servebench must reproduce (tests/testdata/numpy_expectations.txt).

Run with Debian's python3-numpy: scripts/gen-numpy-expectations.py > tests/testdata/numpy_expectations.txt
The CTest `numpy_expectations_current` runs it again and compares, when numpy is installed.

One case per line: `name arg … | value …`. Doubles are float.hex() (exact); the arrival cases
mirror vLLM's get_request (vllm/benchmarks/serve.py) and the dataset cases vLLM's
RandomDataset / PrefixRepetitionRandomDataset draws (vllm/benchmarks/datasets), for a tokenizer
whose ids all decode and re-encode to themselves (servebench's built-in word rule), so no
padding draw happens.
"""
import math

import numpy as np

SEEDS = [0, 1, 42, 4294967295]
out = []


def line(name, args, values):
    out.append(" ".join([name] + [str(a) for a in args] + ["|"] + [str(v) for v in values]))


def hexes(values):
    return [float(v).hex() for v in values]


# ---- numpy's legacy RandomState (np.random.seed + np.random.*)
for seed in SEEDS:
    line("mt_raw", [seed], np.random.RandomState(seed)._bit_generator.random_raw(8).tolist())
    line("random_sample", [seed], hexes(np.random.RandomState(seed).random_sample(8)))
    line("standard_exponential", [seed], hexes(np.random.RandomState(seed).standard_exponential(8)))
    line("gauss", [seed], hexes(np.random.RandomState(seed).standard_normal(9)))
    for shape in [0.25, 0.5, 1.0, 1.5, 2.0, 7.3]:
        rs = np.random.RandomState(seed)
        line("gamma", [seed, shape.hex(), (0.5).hex()], hexes([rs.gamma(shape, 0.5) for _ in range(12)]))
    for low, high in [(0, 32000), (0, 50257), (0, 128000), (5, 6), (-3, 4), (0, 2**32), (0, 2**40 + 3)]:
        line("randint", [seed, low, high], np.random.RandomState(seed).randint(low, high, size=10).tolist())

# ---- np.random.default_rng: SeedSequence, PCG64, Generator.integers
for seed in SEEDS + [2**32 + 7, 2**64 - 1]:
    line("seed_sequence", [seed], np.random.SeedSequence(seed).generate_state(8).tolist())
    line("pcg64_raw", [seed], np.random.default_rng(seed).bit_generator.random_raw(6).tolist())
    # One generator through calls of every kind, so the kept 32-bit half carries across calls.
    g = np.random.default_rng(seed)
    values = []
    for low, high, size in [(5, 10, 3), (0, 32000, 4), (0, 2**40, 3), (7, 8, 2), (0, 2**32, 3),
                            (100, 100 + 2**31 + 1, 3), (0, 151936, 5), (-(2**62), 2**62, 2)]:
        values += g.integers(low, high, size=size).tolist()
    line("integers_mixed", [seed], values)


# ---- vLLM's arrivals (get_request): np.random.seed(seed), gamma gaps, cumulative, rescaled
def vllm_delays(n, rate, burstiness, ramp=None):
    delays = []
    for i in range(n):
        current = rate
        if ramp is not None:
            strategy, start, end = ramp
            progress = i / max(n - 1, 1)
            if strategy == "linear":
                current = start + (end - start) * progress
            else:
                current = start * ((end / start) ** progress)
        if burstiness == float("inf"):
            delays.append(1.0 / current)
        else:
            delays.append(np.random.gamma(shape=burstiness, scale=1.0 / (current * burstiness)))
    for i in range(1, len(delays)):
        delays[i] += delays[i - 1]
    if ramp is None and delays[-1] != 0:
        factor = (n / rate) / delays[-1]
        delays = [d * factor for d in delays]
    return delays


for seed in SEEDS:
    for n, rate, burstiness in [(20, 2.0, 1.0), (50, 10.0, 0.5), (30, 3.5, 2.0), (7, 1.0, 0.1),
                                (40, 100.0, 4.0)]:
        np.random.seed(seed)
        line("arrivals", [seed, n, rate.hex(), burstiness.hex()], hexes(vllm_delays(n, rate, burstiness)))
    for strategy, start, end, burstiness in [("linear", 1, 10, 1.0), ("exponential", 2, 50, 0.7)]:
        np.random.seed(seed)
        line("ramp_up", [seed, 25, strategy, start, end, burstiness.hex()],
             hexes(vllm_delays(25, float("inf"), burstiness, (strategy, start, end))))

# ---- vLLM's RandomDataset draws (default_rng(seed)): input lengths, output lengths, offsets,
# prefix; prompt i = prefix + (offset_i + i + arange(input_len_i)) % vocab.
VOCAB = 32000  # the built-in word rule's vocabulary
for seed in [0, 7]:
    for n, input_len, output_len, ratio, prefix_len in [(6, 12, 8, 0.0, 0), (5, 10, 20, 0.5, 3),
                                                        (4, 3, 1, 0.9, 2)]:
        g = np.random.default_rng(seed)
        input_lens = g.integers(math.floor(input_len * (1 - ratio)),
                                math.ceil(input_len * (1 + ratio)) + 1, size=n)
        output_lens = g.integers(max(math.floor(output_len * (1 - ratio)), 1),
                                 max(math.ceil(output_len * (1 + ratio)), 1) + 1, size=n)
        offsets = g.integers(0, VOCAB, size=n)
        prefix = g.integers(0, VOCAB, size=prefix_len).tolist() if prefix_len > 0 else []
        args = [seed, n, input_len, output_len, ratio.hex(), prefix_len]
        line("random_output_lens", args, output_lens.tolist())
        for i in range(n):
            ids = prefix + ((offsets[i] + i + np.arange(input_lens[i])) % VOCAB).tolist()
            line("random_prompt", args + [i], ids)

# ---- vLLM's PrefixRepetitionRandomDataset: np.random.seed(seed) again, np.random.randint ids
# (prefix, then its suffixes, prefix by prefix), before the arrivals draw from the same stream.
for seed in [0, 3]:
    prefix_len, suffix_len, num_prefixes, per_prefix = 4, 3, 2, 3
    np.random.seed(seed)
    sequences = []
    for _ in range(num_prefixes):
        prefix = np.random.randint(0, VOCAB, size=prefix_len).tolist()
        for _ in range(per_prefix):
            sequences.append(prefix + np.random.randint(0, VOCAB, size=suffix_len).tolist())
    args = [seed, prefix_len, suffix_len, num_prefixes, per_prefix]
    for k, ids in enumerate(sequences):
        line("prefix_repetition_prompt", args + [k], ids)
    line("prefix_repetition_arrivals", args + [12, (4.0).hex(), (1.0).hex()],
         hexes(vllm_delays(12, 4.0, 1.0)))

# ---- The same two datasets with padding: a toy tokenizer (src/dataset/test_support.h's
# CharTokenizer) whose ids 0..19 decode to one letter, 20..25 to two, the rest to nothing, and
# whose encoding is one id per letter, so re-encoding changes lengths and vLLM pads with draws
# from the generator (gen_prompt_decode_to_target_len, max_retry 10). The prompts' texts.
TOY_VOCAB = 40


def toy_decode(ids):
    return "".join(chr(97 + i) if i < 20 else chr(97 + i - 20) * 2 if i < 26 else "" for i in ids)


def toy_encode(text):
    return [ord(c) - 97 for c in text]


def decode_to_target_len(ids, target, rng):  # vLLM's gen_prompt_decode_to_target_len
    remain = 10
    while True:
        prompt = toy_decode(ids)
        ids = toy_encode(prompt)
        if remain <= 0:
            break
        if len(ids) == target:
            break
        if len(ids) < target:
            draw = rng.integers if rng is not None else np.random.randint
            ids.extend(draw(0, TOY_VOCAB, size=target - len(ids)).tolist())
        else:
            ids = ids[:target]
        remain -= 1
    return prompt, ids


for seed in [0, 9]:
    n, input_len, prefix_len = 30, 40, 6
    g = np.random.default_rng(seed)
    input_lens = g.integers(input_len, input_len + 1, size=n)
    g.integers(4, 5, size=n)  # output lengths: one value, no draw
    offsets = g.integers(0, TOY_VOCAB, size=n)
    prefix = g.integers(0, TOY_VOCAB, size=prefix_len).tolist()
    texts = []
    for i in range(n):
        ids = prefix + ((offsets[i] + i + np.arange(input_lens[i])) % TOY_VOCAB).tolist()
        texts.append(decode_to_target_len(ids, prefix_len + int(input_lens[i]), g)[0])
    line("random_toy_prompts", [seed, n, input_len, prefix_len], texts)

for seed in [0, 5]:
    prefix_len, suffix_len, num_prefixes, per_prefix = 12, 9, 3, 4
    np.random.seed(seed)
    texts = []
    for _ in range(num_prefixes):
        prefix = decode_to_target_len(np.random.randint(0, TOY_VOCAB, size=prefix_len).tolist(),
                                      prefix_len, None)[1]
        for _ in range(per_prefix):
            suffix = decode_to_target_len(np.random.randint(0, TOY_VOCAB, size=suffix_len).tolist(),
                                          suffix_len, None)[1]
            texts.append(toy_decode(prefix + suffix))
    args = [seed, prefix_len, suffix_len, num_prefixes, per_prefix]
    line("prefix_repetition_toy_prompts", args, texts)
    line("prefix_repetition_toy_arrivals", args + [10, (2.0).hex(), (0.5).hex()],
         hexes(vllm_delays(10, 2.0, 0.5)))

print(f"# numpy {np.__version__}; generated by scripts/gen-numpy-expectations.py")
print("\n".join(out))
