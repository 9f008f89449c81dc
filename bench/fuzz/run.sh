#!/usr/bin/env bash
# Fuzzes the dataset parsers with libFuzzer for a bounded time (default 120 s):
#   bench/fuzz/run.sh [SECONDS]
# Needs clang and its runtime (Debian: clang libclang-rt-14-dev). Builds into build-fuzz/ with
# ASan and UBSan; the corpus starts from the committed fixtures. Not part of CTest.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-120}"
out=build-fuzz
mkdir -p "$out/corpus"
sources=(src/dataset/{dataset,random_dataset,sharegpt_dataset,custom_dataset,sonnet_dataset}.cpp
         src/dataset/{shared_prefix_dataset,trace_dataset,input_file,py_random,synth}.cpp
         src/tokenizer/word_tokenizer.cpp src/core/core.cpp)
if [ ! -x "$out/dataset_fuzz" ] || [ -n "$(find bench/fuzz src/dataset src/tokenizer/word_tokenizer.cpp -newer "$out/dataset_fuzz" -name '*.[ch]*' | head -1)" ]; then
  clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Isrc bench/fuzz/dataset_fuzz.cpp "${sources[@]}" -lsimdjson -o "$out/dataset_fuzz"
fi
# Seeds: each fixture behind the selector byte of the parser that reads it.
seed() { { printf "\\x$(printf %02x "$1")"; cat "$2"; } > "$out/corpus/seed-$1-$(basename "$2")"; }
seed 0 tests/fixtures/datasets/sharegpt.json
seed 1 tests/fixtures/datasets/custom.jsonl
seed 2 tests/fixtures/datasets/mooncake.jsonl
seed 3 tests/fixtures/datasets/azure.csv
seed 4 tests/fixtures/datasets/verses.txt
FUZZ_TMPDIR="${TMPDIR:-/tmp}" "$out/dataset_fuzz" -max_total_time="$seconds" -max_len=65536 \
  -artifact_prefix="$out/" \
  -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 "$out/corpus"
