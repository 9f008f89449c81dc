#!/usr/bin/env bash
# Builds the benchmark targets and runs every benchmark once, side by side with the floor:
# micro-benchmarks, harness 1 (simulator), harness 2 (client). About 15 minutes on 2 cores.
#   bench/scripts/run_all.sh [BUILD_DIR]      (default build-bench)   REPS=3
# Results go to BUILD_DIR/bench-results/all-<date>/ (summary.md files and raw.jsonl lines).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-bench}
REPS=${REPS:-3}
OUT="$BUILD/bench-results/all-$(date +%Y%m%d-%H%M%S)"
cmake -S . -B "$BUILD" -G Ninja >/dev/null
cmake --build "$BUILD" --target servebench floor_sse_server floor_reader floor_pacer servebench_micro -j2
mkdir -p "$OUT"
taskset -c 0 "$BUILD/bench/servebench_micro" --benchmark_repetitions="$REPS" \
    --benchmark_report_aggregates_only=true --benchmark_out="$OUT/micro.json" \
    --benchmark_out_format=json | tee "$OUT/micro.txt"
python3 bench/scripts/bench_sim.py --build "$BUILD" --reps "$REPS" --out "$OUT/sim"
python3 bench/scripts/bench_client.py --build "$BUILD" --reps "$REPS" --out "$OUT/client"
echo "results in $OUT"
