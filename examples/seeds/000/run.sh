#!/usr/bin/env bash
# Seed 000 with one command: vLLM's serving benchmark at QPS 1, 4, 16, inf against the three
# simulated ND96asr_v4 deployments (suite.yaml), then the seed's "Cumulative Results" table and
# its charts PDF. ./run.sh --quick runs suite-quick.yaml (30 prompts per test).
SEED=000
source "$(dirname "$0")/../common.sh"
seed_run_own_suite "30 prompts per test instead of 200 (suite-quick.yaml)"
pdf="$out/single-node-vs-distributed-ib-and-no-ib-inference-perf.pdf"
{
  echo "## Cumulative Results"
  echo
  "$sb" report "$out" --format vllm-md-aligned
  echo
  echo "## Charts"
  echo
  echo "[charts]($(basename "$pdf"))"
} > "$out/cumulative-results.md"
"$sb" report "$out" --chart all --series-by deployment --output "$pdf"
echo
cat "$out/cumulative-results.md"
echo
echo "Written: $out/cumulative-results.md, $pdf; the suite's console: $out.log"
exit $status
