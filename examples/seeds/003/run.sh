#!/usr/bin/env bash
# Seed 003 with one command: the suite (suite.yaml, or suite-quick.yaml with --quick), then the
# seed's layout: inference-perf's stages table and GuideLLM's Metadata, Info and Stats tables per
# deployment (No IB, then IB), the comparison IB against no IB, and charts: the sweeps against
# their load (guidellm-ib-vs-no-ib.pdf, as the seed's PDF) and each test's run over time from
# the scraped /metrics and /dcgm/metrics (timeline-<test>.png: running/waiting requests, KV
# cache, token throughput, GPU utilization, NVLink and InfiniBand bytes), in place of the seed's
# Grafana boards. Usage: ./run.sh [--quick] [--out DIR] [--resume]
# (common.sh).
SEED=003
source "$(dirname "$0")/../common.sh"
seed_run_own_suite "GuideLLM benchmarks of 8 s (not 30) with 32 output tokens (not 128) and at most 64 requests at once (not 512); inference-perf stages QPS 1, 4, 16, 64 of 5 s (not QPS 1 ... 275 of 30 s); the full variant takes 30-40 minutes"
echo
report() { [ -d "$1" ] && "$sb" report "$@" || echo "(no results in $1)"; }
echo "## Inference Perf"
for d in no-ib ib; do
  echo; echo "### $( [ $d = ib ] && echo IB || echo No IB )"; echo
  report "$out/inference-perf-$d" --format inference-perf
done
echo; echo "## GuideLLM"
for d in no-ib ib; do
  echo; echo "### $( [ $d = ib ] && echo IB || echo No IB )"; echo
  echo '```'
  report "$out/guidellm-$d" --format guidellm
  echo '```'
done
echo; echo "## IB against no IB (GuideLLM, rows matched by their place in the sweep)"; echo
"$sb" compare "$out/guidellm-no-ib" "$out/guidellm-ib" --match order \
  --metrics completed,request_throughput,mean_ttft_ms,mean_tpot_ms,mean_e2el_ms || true
echo; echo "## IB against no IB (inference-perf, stage by stage)"; echo
"$sb" compare "$out/inference-perf-no-ib" "$out/inference-perf-ib" --match order \
  --metrics completed,request_throughput,mean_e2el_ms || true
echo
"$sb" report "$out/guidellm-no-ib" "$out/guidellm-ib" --chart all \
  --output "$out/guidellm-ib-vs-no-ib.pdf" && echo "Charts: $out/guidellm-ib-vs-no-ib.pdf"
for t in guidellm-no-ib guidellm-ib inference-perf-no-ib inference-perf-ib; do
  [ -d "$out/$t" ] || continue
  "$sb" report "$out/$t" --chart timeline --output "$out/timeline-$t.png" &&
    echo "Timeline: $out/timeline-$t.png"
done
exit $status
