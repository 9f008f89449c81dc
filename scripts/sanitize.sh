#!/usr/bin/env bash
# Sanitizers and fuzzers (issue 19), from one build: clang with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage instrumentation, into build-asan/. It runs
# the test suite there (every test but the labels in SANITIZE_CTEST_EXCLUDE, by default the
# Chromium and scale-out tests: they drive a browser, Slurm and namespaces around the same
# binary, and scripts/test.sh runs them once, in the normal build), then each libFuzzer target
# of bench/fuzz/ for a bounded time on every parser: SSE stream, dataset files, tokenizer.json,
# Prometheus exposition, suite files, result import.
#   scripts/sanitize.sh [FUZZ_SECONDS_EACH]     (default 60; scripts/test.sh passes 30)
#   SANITIZE_SKIP_TESTS=1 / SANITIZE_SKIP_FUZZ=1 leave one half out.
# Why clang at -O0 -g1: one build serves the tests and the fuzzers (libFuzzer is clang's), and
# it compiles in about half the CPU time of the normal GCC build, where GCC's -O1 -g ASan build
# took twice it (docs/reliability.md, "Sanitizers in CI"). Needs clang and libclang-rt-14-dev
# (scripts/install-deps.sh --tests). Exit status: non-zero when a test fails, a sanitizer
# reports, or a fuzzer finds a crash (its input is left in build-asan/findings/).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${1:-60}"
jobs="$(nproc)"
build=build-asan
start=$(date +%s)
for tool in clang++ cmake ninja; do
  command -v "$tool" >/dev/null ||
    { echo "sanitize: $tool is not installed (scripts/install-deps.sh --tests installs it)" >&2; exit 1; }
done

sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
    -DCMAKE_CXX_FLAGS="-fno-omit-frame-pointer -fsanitize=fuzzer-no-link $sanitizers" \
    -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" \
    -DSERVEBENCH_BUILD_BENCH=OFF -DSERVEBENCH_BUILD_FUZZ=ON >"$log" 2>&1; then
  echo "sanitize: configuring $build/ with CMake failed:" >&2
  cat "$log" >&2
  exit 1
fi
cmake --build "$build" -j"$jobs"
echo "sanitize.sh: built in $(( $(date +%s) - start )) s"

if [ -z "${SANITIZE_SKIP_TESTS:-}" ]; then
  tests_start=$(date +%s)
  # detect_leaks: a leak is a finding too. Third-party caches kept until exit (fontconfig and
  # libltdl under PLplot's cairo drivers) are suppressed: the file says why.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt:print_suppressions=0"
  # SimServerLimits.FullDescriptorTable… uses up the process's descriptors on purpose; the
  # sanitizer runtime then cannot open the pipe its vptr check reads memory through and reports
  # a false "invalid vptr" inside Boost.Asio. It runs in the normal build.
  ctest --test-dir "$build" --output-on-failure -j"$jobs" \
    -LE "${SANITIZE_CTEST_EXCLUDE:-chromium|scale-out}" \
    -E "SimServerLimits.FullDescriptorTableClosesWaitingConnections" --timeout 600
  echo "sanitize.sh: ASan+UBSan test suite passed in $(( $(date +%s) - tests_start )) s"
fi

if [ -z "${SANITIZE_SKIP_FUZZ:-}" ]; then
  fuzz_start=$(date +%s)
  targets=(sse_stream_fuzz dataset_fuzz tokenizer_json_fuzz exposition_fuzz suite_file_fuzz
           result_import_fuzz)
  mkdir -p "$build/findings"
  status=0
  for target in "${targets[@]}"; do
    corpus="$build/corpus/$target"
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
    if ! FUZZ_TMPDIR="${TMPDIR:-/tmp}" "$build/bench/fuzz/$target" "$corpus" \
        -max_total_time="$fuzz_seconds" -max_len=65536 -timeout=20 -rss_limit_mb=4096 \
        -artifact_prefix="$build/findings/$target-" -print_final_stats=1 \
        > "$build/$target.log" 2>&1; then
      echo "sanitize.sh: $target found a problem ($build/$target.log, $build/findings/)"
      tail -40 "$build/$target.log"
      status=1
    else
      grep -E "^stat::number_of_executed_units|^Done" "$build/$target.log" | tail -1 || true
    fi
  done
  echo "sanitize.sh: fuzzers done in $(( $(date +%s) - fuzz_start )) s"
  [ "$status" -eq 0 ] || exit "$status"
fi
echo "sanitize.sh: all done in $(( $(date +%s) - start )) s"
