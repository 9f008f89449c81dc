#!/usr/bin/env bash
# Seed 002 with one command: vLLM's performance suite as the seed ran it, its three test files
# (latency-tests.json, throughput-tests.json, serving-tests.json, the last with the
# speculative-decoding test at QPS 2) against simulated deployments, then the seed's report:
# each kind's description and markdown table, and the same tables as the JSON pandas loads.
# ./run.sh --quick runs quick/*.json (quick/README.md says what they shrink).
SEED=002
source "$(dirname "$0")/../common.sh"
files=(examples/seeds/002/latency-tests.json examples/seeds/002/throughput-tests.json
       examples/seeds/002/serving-tests.json)
[ "$quick" = 1 ] && files=("${files[@]/002\//002/quick/}")
prompts=200 throughput_prompts=200
[ "$quick" = 1 ] && prompts=30 throughput_prompts=50
seed_run_suite "latency 1 warmup + 3 iterations instead of 5 + 15, throughput 50 prompts instead of 200, serving 30 prompts per QPS instead of 200 (quick/*.json)" "${files[@]}"
seed_suite_status

# One kind's table without the report's own section heading (the description gives it).
table() { "$sb" report "$@" --format vllm-md | sed -e '/^## /d' -e '/./,$!d'; }
latency=("$out"/latency_*.json)
throughput=("$out"/throughput_*.json)
serving=()
for f in "$out"/*.json; do
  case "$(basename "$f")" in
    latency_*|throughput_*|summary.json|*.combined.json) ;;
    *) serving+=("$f") ;;
  esac
done
{
  cat <<'TEXT'
## Latency tests

- Input length: 32 tokens.
- Output length: 128 tokens.
- Batch size: fixed (8).
- Models: llama-3 70B (simulated: seed 000's TP4 x PP2 over InfiniBand, examples/seeds/000/tp4_pp2_IB.yaml).
- Evaluation metrics: end-to-end latency (mean, median, p99).

TEXT
  table "${latency[@]}"
  cat <<TEXT

## Throughput tests

- Input length: $throughput_prompts prompts, 213 tokens on average (ShareGPT's mean; random lengths here, no ShareGPT file).
- Output length: 214 tokens on average.
- Batch size: dynamically determined by the server to achieve maximum throughput.
- Models: llama-3 70B (simulated, as above).
- Evaluation metrics: throughput.

TEXT
  table "${throughput[@]}"
  cat <<TEXT

## Serving tests

- Input length: $prompts prompts per test, 213 tokens each (fixed random seed), ShareGPT's lengths as examples/seeds/000/sharegpt-lengths.jsonl stands in for them.
- Output length: each prompt's own (exponential, mean 230, at most 800; no ShareGPT file here).
- Batch size: dynamically determined by the server and the arrival pattern of the requests.
- **Average QPS (query per second)**: 1, 4, 16 and inf. QPS = inf means all requests come at once. For other QPS values, the arrival time of each query is determined using a random Poisson process (with fixed random seed).
- Models: llama-3 70B (simulated, as above).
- We also added a speculative decoding test for llama-3 70B, under QPS 2 (examples/seeds/002/tp4_pp2_IB_specdecode.yaml).
- Evaluation metrics: throughput, TTFT (time to the first token, with mean, median and p99), ITL (inter-token latency, with mean, median and p99).

TEXT
  table "${serving[@]}"
  cat <<'TEXT'

## json version of the benchmarking tables

This section contains the data of the markdown tables above in JSON format.
You can load the benchmarking tables into pandas dataframes as follows:

```python
import json
import pandas as pd

benchmarking_results_json = """The json string"""
benchmarking_results = json.loads(benchmarking_results_json)
latency_results = pd.DataFrame.from_dict(benchmarking_results["latency"])
throughput_results = pd.DataFrame.from_dict(benchmarking_results["throughput"])
serving_results = pd.DataFrame.from_dict(benchmarking_results["serving"])
```

The json string for all benchmarking tables:

```json
TEXT
  "$sb" report "${latency[@]}" "${throughput[@]}" "${serving[@]}" --format vllm-json
  echo '```'
} > "$out/benchmark_results.md"
echo
cat "$out/benchmark_results.md"
echo
echo "Written: $out/benchmark_results.md; the suite's console: $out.log"
exit $status
