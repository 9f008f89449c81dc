#!/usr/bin/env bash
# Seed 004 with one command: the suite (suite.yaml, or suite-quick.yaml with --quick), then for
# each deployment its title and configuration as the seed prints them and one concurrency table
# per ISL:OSL (servebench report --format concurrency). Usage: ./run.sh [--quick] [--out DIR] [--resume]
# (common.sh).
SEED=004
source "$(dirname "$0")/../common.sh"
seed_run_own_suite "ISL:OSL 3000:150 and 2500:100 only (not 1000:1000, 500:1000), concurrency 1, 8, 64 (not 1, 2, 4 ... 128), c prompts per concurrency (not 10 x c); the full variant runs the seed's 160 points, several hours"
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
  grep -v '^#' "examples/seeds/004/$d.yaml"
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
