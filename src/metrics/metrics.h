// File: metrics/metrics.h
// Turns RequestRecords into figures. vLLM's definitions are the default and named as such;
// servebench's extras (per-token ITL, latency from the intended send time, schedule lag) are a
// separate struct so a result never mixes the two. Warmup records are ignored.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "record/record.h"

namespace servebench::metrics {

// mean, median, std (population, as np.std), and the requested percentiles (numpy's default
// linear interpolation), in the unit of the samples. All zero for no samples, as vLLM prints.
struct Distribution {
  double mean = 0, median = 0, std = 0, min = 0, max = 0;
  size_t count = 0;
  std::vector<std::pair<double, double>> percentiles;  // (p, value), p in [0, 100]
};

// numpy.percentile(samples, p) with linear interpolation; samples need not be sorted.
double percentile_linear(std::vector<double> samples, double p);
Distribution summarize(std::vector<double> samples, const std::vector<double>& percentiles);

struct Options {
  std::vector<double> percentiles = {99};  // --metric-percentiles
  // --goodput: SLO in ms per metric name ("ttft", "tpot", "e2el"); empty = no goodput.
  std::map<std::string, double> goodput_slo_ms;
};

// vLLM's BenchmarkMetrics, same meanings (times in ms).
struct VllmMetrics {
  size_t completed = 0;
  size_t failed = 0;
  double duration_s = 0;
  int64_t total_input = 0;
  int64_t total_output = 0;
  double request_throughput = 0;
  double request_goodput = 0;  // -1 when no --goodput given
  double output_throughput = 0;
  double total_token_throughput = 0;
  Distribution ttft_ms, tpot_ms, itl_ms, e2el_ms;
  double max_output_tokens_per_s = 0;  // vLLM's "Peak output token throughput"
  double max_concurrent_requests = 0;  // vLLM's "Peak concurrent requests"
};

// servebench's own figures, under their own key.
struct Extras {
  Distribution itl_per_token_ms;       // chunk gap / tokens in the chunk, per token
  Distribution ttft_from_intended_ms;  // first token - intended send time
  Distribution e2el_from_intended_ms;  // last token - intended send time
  Distribution schedule_lag_ms;        // sent - intended
  double requested_rate = 0;           // req/s asked for (inf allowed)
  double achieved_rate = 0;            // requests sent / span of send times
  std::map<std::string, size_t> failures_by_reason;
};

struct Summary {
  VllmMetrics vllm;
  Extras extras;
};

// duration_s: the benchmark's wall duration, measured by the caller as vLLM does (from the
// first dispatch to the last completion).
Summary compute(std::span<const record::RequestRecord> records, double duration_s,
                const Options& options);

}  // namespace servebench::metrics
