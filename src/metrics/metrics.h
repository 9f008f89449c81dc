// File: metrics/metrics.h
// Turns RequestRecords into figures. vLLM's definitions are the default and named as such;
// servebench's extras (per-token ITL, latency from the intended send time, schedule lag) are a
// separate struct so a result never mixes the two. Warmup records are ignored.
// docs/metrics.md gives every formula and the vLLM source it matches.
#pragma once

#include <cstdint>
#include <limits>
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
// 0 for no samples (vLLM's `np.percentile(x or 0, p)`); throws core::Error for p outside
// [0, 100] or NaN.
double percentile_linear(std::vector<double> samples, double p);
Distribution summarize(std::vector<double> samples, const std::vector<double>& percentiles);

// vLLM's label for a percentile: "99" for 99.0, "99.9" for 99.9 (Python's str(float)).
std::string percentile_word(double p);

struct Options {
  std::vector<double> percentiles = {99};  // --metric-percentiles
  // --goodput: SLO in ms per metric name ("ttft", "tpot", "e2el"); empty = no goodput.
  std::map<std::string, double> goodput_slo_ms;
  // --request-rate as asked (req/s, inf allowed); only echoed into Extras.
  double requested_rate = std::numeric_limits<double>::infinity();
};

// Parsers for the flags above, with vLLM's rules; throw core::Error (usage) naming the flag.
// "ttft:100 e2el:2000" arrives as {"ttft:100", "e2el:2000"}.
std::map<std::string, double> parse_goodput(const std::vector<std::string>& pairs);
// "25,50,99.9" -> {25, 50, 99.9}; each in [0, 100].
std::vector<double> parse_percentiles(const std::string& csv);

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
  // vLLM's client-side queueing (sent - arrival at the semaphore, which is our intended time)
  // and latency + queue, over completed requests. vLLM reports them only with
  // --max-concurrency (the second only with a finite rate) when named in --percentile-metrics.
  Distribution client_queue_time_ms, e2el_including_client_queue_ms;
};

// Requests that did not complete, with their prompt tokens and the output tokens they had
// received (GuideLLM's Info table counts these for its "Inc" and "Err" columns).
struct Unfinished {
  size_t requests = 0;
  int64_t input_tokens = 0, output_tokens = 0;
};

// servebench's own figures, under their own key.
struct Extras {
  Distribution itl_per_token_ms;       // chunk gap / tokens in the chunk, per token
  Distribution ttft_from_intended_ms;  // first token - intended send time
  Distribution e2el_from_intended_ms;  // last token - intended send time
  Distribution schedule_lag_ms;        // sent - intended
  double requested_rate = 0;           // req/s asked for (inf allowed)
  double achieved_rate = 0;            // requests sent / (last send - t0), in req/s
  std::map<std::string, size_t> failures_by_reason;
  Unfinished incomplete;  // cut off: failures of reason "cancelled" (GuideLLM's incomplete)
  Unfinished errored;     // every other failure
  size_t itl_per_token_requests = 0;  // completed requests whose chunk_tokens were known
  size_t requests_sent = 0;           // non-warmup records with a send time
  size_t warmup_ignored = 0;          // warmup records skipped
  // The same estimator over the intended times (requests / last intended time): what the
  // schedule asked of the client, to compare achieved_rate with.
  double scheduled_rate = 0;
};

struct Summary {
  VllmMetrics vllm;
  Extras extras;
};

// duration_s: the benchmark's wall duration, measured by the caller as vLLM does (from the
// first dispatch to the last completion).
Summary compute(std::span<const record::RequestRecord> records, double duration_s,
                const Options& options);

// Output tokens exactly as vLLM's calculate_metrics counts them: record::output_tokens(), but
// a usage count of 0 falls back to the client's count, else 1 (vLLM's `if not output_len`).
int64_t vllm_output_tokens(const record::RequestRecord& r);

// A stable reason for a failed request: "not_sent", "http_<code>" (e.g. "http_503"),
// "timeout", "connection", "malformed", "no_tokens" (200 without any choices event),
// "stream_error" (failed after streaming began), or "other". "" for a success.
std::string classify_failure(const record::RequestRecord& r);

}  // namespace servebench::metrics
