#!/usr/bin/env bash
# Seed 004 with one command: the suite (suite.yaml, or suite-quick.yaml with --quick), then for
# each deployment its title and configuration as the seed prints them and one concurrency table
# per ISL:OSL (servebench report --format concurrency). Usage: ./run.sh [--quick] [--output-dir DIR]
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
  out=${out:-$PWD/seed004-quick-results}
  echo "Seed 004, QUICK variant: ISL:OSL 3000:150 and 2500:100 only (not 1000:1000, 500:1000),"
  echo "concurrency 1, 8, 64 (not 1, 2, 4 ... 128), c prompts per concurrency (not 10 x c)."
  echo "The full variant (./run.sh, without --quick) runs the seed's 160 points: several hours."
else
  suite=suite.yaml
  out=${out:-$PWD/seed004-results}
  echo "Seed 004, full variant: 5 deployments x 4 ISL:OSL x concurrency 1 ... 128, 10 x c prompts."
fi
case "$out" in /*) ;; *) out=$PWD/$out ;; esac
cd "$here"
status=0
"$sb" suite "$suite" --output-dir "$out" > "$out.log" 2>&1 || status=$?
echo "Suite: $suite, exit code $status; console output in $out.log, results in $out/"
echo
title() {
  case "$1" in
    dynamo-3p1d) echo "Dynamo 3P(TP4) 1D(TP4)" ;;
    dynamo-6p1d) echo "Dynamo 6P(TP2) 1D(TP4)" ;;
    dynamo-12p1d) echo "Dynamo 12P(TP1) 1D(TP4)" ;;
    vllm-v0-4xtp4) echo "vLLM v0.8.4 V0 Engine" ;;
    vllm-v1-4xtp4) echo "vLLM v0.9.0.1 V1 Engine" ;;
  esac
}
for d in dynamo-3p1d dynamo-6p1d dynamo-12p1d vllm-v0-4xtp4 vllm-v1-4xtp4; do
  ls "$out/${d}"_*.json > /dev/null 2>&1 || continue
  echo "# $(title $d)"
  echo
  echo "H20 96GB (simulated: examples/seeds/004/$d.yaml)"
  echo
  echo "## Config"
  echo
  echo '```yaml'
  grep -v '^#' "$d.yaml"
  echo '```'
  echo
  for pair in 3000-150 1000-1000 500-1000 2500-100; do  # the seed's order of tables
    files=("$out/${d}_${pair}"_c*.json)
    [ -e "${files[0]}" ] || continue
    "$sb" report "${files[@]}" --format concurrency
    echo
  done
done
exit $status
