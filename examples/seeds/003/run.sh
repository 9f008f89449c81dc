#!/usr/bin/env bash
# Seed 003 with one command: the suite (suite.yaml, or suite-quick.yaml with --quick), then the
# seed's layout: inference-perf's stages table and GuideLLM's Metadata, Info and Stats tables per
# deployment (No IB, then IB), the comparison IB against no IB, and charts: the sweeps against
# their load (guidellm-ib-vs-no-ib.pdf, as the seed's PDF) and each test's run over time from
# the scraped /metrics and /dcgm/metrics (timeline-<test>.png: running/waiting requests, KV
# cache, token throughput, GPU utilization, NVLink and InfiniBand bytes), in place of the seed's
# Grafana boards. Usage: ./run.sh [--quick] [--output-dir DIR]
# SERVEBENCH names the binary (default: servebench on PATH, else the repo's build/servebench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
quick=0
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --output-dir) out=$2; shift ;;
    *) echo "run.sh: unknown argument '$1' (expected --quick, --output-dir DIR)" >&2; exit 2 ;;
  esac
  shift
done
sb=${SERVEBENCH:-$(command -v servebench || echo "$here/../../../build/servebench")}
[ -x "$sb" ] || { echo "run.sh: no servebench binary at '$sb' (build it, or set SERVEBENCH)" >&2; exit 2; }
if [ $quick = 1 ]; then
  suite=suite-quick.yaml
  out=${out:-$PWD/seed003-quick-results}
  echo "Seed 003, QUICK variant: GuideLLM benchmarks of 8 s (not 30) with 32 output tokens (not"
  echo "128) and at most 64 requests at once (not 512); inference-perf stages QPS 1, 4, 16, 64 of"
  echo "5 s (not QPS 1 ... 275 of 30 s). The full variant (./run.sh) takes 30-40 minutes."
else
  suite=suite.yaml
  out=${out:-$PWD/seed003-results}
  echo "Seed 003, full variant: GuideLLM sweeps of 10 x 30 s, inference-perf stages QPS 1 ... 275 of 30 s."
fi
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
cd "$here"
status=0
"$sb" suite "$suite" --output-dir "$out" > "$out.log" 2>&1 || status=$?
echo "Suite: $suite, exit code $status; console output in $out.log, results in $out/"
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
