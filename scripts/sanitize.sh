#!/usr/bin/env bash
# Sanitizers and fuzzers (issue 19): builds the whole test suite with AddressSanitizer and
# UndefinedBehaviorSanitizer into build-asan/ (GCC, as the normal build) and runs it once (the
# slow integration tests included, once), then builds the libFuzzer targets of bench/fuzz/ with
# clang into build-fuzz/ and runs each for a bounded time on every parser: SSE stream, dataset
# files, tokenizer.json, Prometheus exposition, suite files, result import.
#   scripts/sanitize.sh [FUZZ_SECONDS_EACH]     (default 60)
#   SANITIZE_SKIP_TESTS=1 / SANITIZE_SKIP_FUZZ=1 leave one half out.
# Needs clang and libclang-rt-14-dev for the fuzzers (Debian: clang). Exit status: non-zero when
# a test fails, a sanitizer reports, or a fuzzer finds a crash (its input is left in
# build-fuzz/findings/).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-60}"
jobs="$(nproc)"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
start=$(date +%s)

if [ -z "${SANITIZE_SKIP_TESTS:-}" ]; then
  # GCC 12 reports false "may be used uninitialized" in libstdc++ (regex, optional) under ASan.
  flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
  flags+=" -Wno-maybe-uninitialized"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug "${launcher[@]}" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DSERVEBENCH_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j"$jobs"
  # detect_leaks: a leak is a finding too. Threads' stacks are large under ASan; keep the open
  # files limit the tests expect. The chromium test renders HTML: nothing for a sanitizer there.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # Third-party caches kept until exit (fontconfig under PLplot's cairo drivers): the file says why.
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0"
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE chromium --timeout 600
  echo "sanitize.sh: ASan+UBSan test suite passed in $(( $(date +%s) - start )) s"
fi

if [ -z "${SANITIZE_SKIP_FUZZ:-}" ]; then
  fuzz_start=$(date +%s)
  CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
    -DSERVEBENCH_BUILD_TESTS=OFF -DSERVEBENCH_BUILD_FUZZ=ON \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined" >/dev/null
  targets=(sse_stream_fuzz dataset_fuzz tokenizer_json_fuzz exposition_fuzz suite_file_fuzz
           result_import_fuzz)
  cmake --build build-fuzz -j"$jobs" --target "${targets[@]}"
  mkdir -p build-fuzz/findings
  status=0
  for target in "${targets[@]}"; do
    corpus="build-fuzz/corpus/$target"
    mkdir -p "$corpus"
    # Seeds: the committed examples of each format (bench/fuzz/seeds/<target>/, and the
    # tokenizer seeds and dataset fixtures the older scripts use).
    if [ -d "bench/fuzz/seeds/$target" ]; then cp -n "bench/fuzz/seeds/$target"/* "$corpus"/ || true; fi
    case "$target" in
      tokenizer_json_fuzz) cp -n bench/fuzz/seeds/*.json "$corpus"/ || true ;;
      dataset_fuzz)
        i=0
        for f in sharegpt.json custom.jsonl mooncake.jsonl azure.csv verses.txt; do
          { printf "\\x$(printf %02x $i)"; cat "tests/fixtures/datasets/$f"; } > "$corpus/seed-$f"
          i=$((i + 1))
        done ;;
      result_import_fuzz) cp -n src/report/testdata/results/*.json src/report/testdata/search/search.json "$corpus"/ 2>/dev/null || true ;;
    esac
    echo "sanitize.sh: fuzzing $target for $fuzz_seconds s"
    if ! FUZZ_TMPDIR="${TMPDIR:-/tmp}" "build-fuzz/bench/fuzz/$target" "$corpus" \
        -max_total_time="$fuzz_seconds" -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="build-fuzz/findings/$target-" -print_final_stats=1 \
        > "build-fuzz/$target.log" 2>&1; then
      echo "sanitize.sh: $target found a problem (build-fuzz/$target.log, build-fuzz/findings/)"
      tail -40 "build-fuzz/$target.log"
      status=1
    else
      grep -E "^stat::number_of_executed_units|^Done" "build-fuzz/$target.log" | tail -1 || true
    fi
  done
  echo "sanitize.sh: fuzzers done in $(( $(date +%s) - fuzz_start )) s"
  [ "$status" -eq 0 ] || exit "$status"
fi
echo "sanitize.sh: all done in $(( $(date +%s) - start )) s"
