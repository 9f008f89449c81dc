// File: bench/calibration/replay.h
// Replays a benchmark's load through a simulated deployment on a made-up clock (no HTTP):
// vLLM's closed loop at a fixed concurrency or its gamma arrivals, GuideLLM's windows, and
// inference-perf's stages; then computes the metrics as each tool defines them.
#pragma once

#include <cstdint>
#include <vector>

#include "metrics/metrics.h"
#include "sim/deploy/deploy.h"

namespace servebench::calibration {

// What one frontend is sent. Either a closed loop (`concurrency` > 0: that many clients, each
// sending its next request when the previous one's last token arrives, `prompts` in all; vLLM's
// --max-concurrency with an infinite rate), or open-loop `arrivals_ns`.
struct Load {
  int32_t input_tokens = 0;
  int32_t output_tokens = 0;
  // > 0: each request's output is drawn uniformly from [output_min, output_tokens] (a fixed
  // stream), as when a tool does not force every request to its maximum.
  int32_t output_min = 0;
  // > 0: each request's output is drawn from an exponential of mean output_tokens, clipped to
  // [1, output_max]: a long-tailed stand-in for ShareGPT's lengths.
  int32_t output_max = 0;
  int32_t concurrency = 0;
  int64_t prompts = 0;
  std::vector<int64_t> arrivals_ns;
  // > 0: the run ends then (GuideLLM's max_duration): unfinished requests are incomplete and
  // a closed loop sends nothing after it.
  int64_t window_ns = 0;
};

struct RequestResult {
  int64_t send_ns = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  int32_t tokens = 0;
  std::vector<int64_t> chunk_gaps_ns;  // between distinct token times (vLLM's ITL)
};

struct FrontendRun {
  std::vector<RequestResult> completed;
  int64_t incomplete = 0;
  int64_t end_ns = 0;  // the last token of the run, or the window's end
};

// Runs loads[i] against frontend i of the deployment (all at once, t0 = 0).
std::vector<FrontendRun> replay(sim::deploy::DeploymentModel& model,
                                const std::vector<Load>& loads);

// vLLM's benchmark_serving figures as servebench's metrics part computes them (docs/metrics.md:
// TTFT from the send, TPOT = (E2E − TTFT) / (tokens − 1), ITL over chunk gaps, rates over the
// run's duration, numpy's percentiles), plus GuideLLM's variants: its ITL divides by
// tokens − 1, its TPOT by the tokens; and the mean concurrency, Σ E2E / duration.
struct Metrics {
  metrics::VllmMetrics vllm;
  int64_t incomplete = 0;
  double mean_concurrency = 0;
  metrics::Distribution guidellm_itl_ms, guidellm_tpot_ms;
};
Metrics compute_metrics(const FrontendRun& run, int32_t input_tokens);

}  // namespace servebench::calibration
