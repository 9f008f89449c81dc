#!/usr/bin/env bash
# Fuzzes the tokenizer.json parser with libFuzzer for a bounded time (default 300 s; first
# argument overrides), in its own clang build tree build-fuzz/, from the small seed files in
# bench/fuzz/seeds/ (byte-level BPE, SentencePiece-style BPE, Metaspace). Needs clang and
# libclang-rt-14-dev. CI fuzzes it for 30 s (scripts/sanitize.sh); run this after changing
# src/tokenizer/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSERVEBENCH_BUILD_TESTS=OFF -DSERVEBENCH_BUILD_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
cmake --build build-fuzz --target tokenizer_json_fuzz
corpus=build-fuzz/fuzz-corpus
mkdir -p "$corpus"
cp -n bench/fuzz/seeds/*.json "$corpus"/
build-fuzz/bench/fuzz/tokenizer_json_fuzz "$corpus" -max_total_time="$seconds" -max_len=65536 \
  -rss_limit_mb=4096 -timeout=30 -print_final_stats=1
