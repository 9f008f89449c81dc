// File: run/kinds.h
// vLLM's offline benchmarks (`vllm bench latency`, `vllm bench throughput`) carried out against
// a server: each iteration is a spec run by run::execute in this process with its console muted
// (the kind prints vLLM's own lines instead), its result read back; the kind writes vLLM's JSON.
// `cli` builds these specs from the commands' flags (docs/run.md, "Latency and throughput").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/run.h"

namespace servebench::run {

// vLLM's latency.py: one batch of batch_size prompts sent at once, warmups untimed, then iters
// timed; each iteration's latency is its run's duration (first send to last response).
struct LatencySpec {
  Spec batch;  // one iteration, saved in batch.result_dir (removed after without output_json)
  int64_t batch_size = 8, input_len = 32, output_len = 128, warmups = 10, iters = 30;
  std::string output_json;                                    // vLLM's latency JSON; "" = none
  std::vector<std::pair<std::string, std::string>> metadata;  // stored at the JSON's top
};
int execute_latency(const LatencySpec& spec);

// vLLM's throughput.py: every prompt at once; elapsed_time is the run's duration.
struct ThroughputSpec {
  Spec run;  // saved as run.result_dir/run.result_filename (removed after without output_json)
  std::string output_json;  // vLLM's throughput JSON; "" = none
  std::vector<std::pair<std::string, std::string>> metadata;
};
int execute_throughput(const ThroughputSpec& spec);

}  // namespace servebench::run
