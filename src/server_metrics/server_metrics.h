// File: server_metrics/server_metrics.h
// What the server says about itself while it is benchmarked: its Prometheus /metrics text
// (vLLM, SGLang, TGI, Dynamo and the simulator all expose one) scraped at a fixed interval
// from a low-priority thread, one scrape right before t0 and one right after the last request,
// then summarized per series: gauges (mean, min, max, percentiles over the scrapes), counters
// (increase and rate over the run, resets allowed for), histograms (increase of count and sum,
// quantiles estimated from the bucket increases as Prometheus' histogram_quantile does).
// AIPerf collects the same way (docs.nvidia.com/aiperf, "Server Metrics Collection"); GuideLLM
// users ask for it (vllm-project/guidellm#457). It sits beside the client: it never touches a
// benchmark request.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace servebench::server_metrics {

enum class MetricType { kUntyped, kGauge, kCounter, kHistogram, kSummary };

// One parsed exposition: every sample line, and the family types its `# TYPE` lines declare.
struct Sample {
  std::string name;    // as written, e.g. "vllm:e2e_request_latency_seconds_bucket"
  std::string labels;  // canonical: sorted, `a="x",b="y"` (escapes kept), "" without labels
  double value = 0;
};
struct Exposition {
  std::vector<Sample> samples;
  std::map<std::string, MetricType> types;  // family name → type
};

// Parses Prometheus' text exposition format (version 0.0.4; OpenMetrics' `# EOF` accepted).
// Throws core::Error (kInput) naming `source` and the line: "<source> line 12: …".
Exposition parse_exposition(std::string_view text, const std::string& source);

// The (name, value) pairs of a canonical label set (`a="x",b="y"`), escapes undone.
std::vector<std::pair<std::string, std::string>> split_labels(const std::string& canonical);

// The family a sample belongs to and its type ("x_bucket" of histogram "x", "x_total" of
// counter "x" in OpenMetrics naming), or the sample's own name and kUntyped.
std::pair<std::string, MetricType> family_of(const Exposition& exposition,
                                             const std::string& sample_name);

// One scrape of one endpoint, at `t_ns` (core::mono_ns()).
struct Scrape {
  int64_t t_ns = 0;
  Exposition exposition;
};

// Everything scraped from one endpoint during a run.
struct EndpointSeries {
  std::string url;  // without credentials
  std::vector<Scrape> scrapes;
  uint64_t failures = 0;
  std::string first_error;  // one line, secrets redacted
};

struct SamplerTarget {
  std::string url;      // may hold credentials: never printed
  std::string display;  // the URL as messages and results show it
};

struct SamplerOptions {
  std::vector<SamplerTarget> targets;
  std::vector<std::string> headers;  // "Name: value", sent with every scrape; never logged
  bool insecure = false;             // skip TLS verification
  std::string ca_file;               // PEM file of the CAs to verify with; "" = libcurl's
  double interval_s = 0.333;         // AIPerf's default
  double timeout_s = 5;              // per scrape
  bool keep_latest = false;          // keep each endpoint's last scrape for latest() (--live)
};

// Scrapes every URL on a background thread from start() to stop(). A failed scrape is counted
// and remembered, never thrown: the benchmark goes on without it.
class Sampler {
 public:
  explicit Sampler(SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Scrapes once on the calling thread (the baseline), then starts the thread.
  void start();
  // Stops the thread, scrapes once more on the calling thread (the end), returns everything.
  std::vector<EndpointSeries> stop();
  // With options.keep_latest, from any thread: each endpoint's last scrape so far (an endpoint
  // with none yet has no scrape); never waits for a scrape in progress.
  std::vector<EndpointSeries> latest() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Scrapes `target` once and checks it is an exposition with samples; throws core::Error
// (kNetwork or kInput) otherwise. Decides whether `auto` finds metrics at the server.
void probe(const SamplerTarget& target, const SamplerOptions& options);

// The metrics that mean the same on every server, under the names each uses (vLLM's `vllm:`,
// SGLang's `sglang:`, TGI's, Dynamo's frontend, the simulator's own): the console block's lines
// and the summary's `headline`.
struct KnownMetric {
  const char* key;    // headline stem, e.g. "running_requests", "ttft_ms"
  const char* label;  // console label, e.g. "Running requests"
  std::vector<const char*> names;
  double scale;  // e.g. 1000 for seconds shown as ms, 100 for a fraction shown as %
  // Gauges with several series (data-parallel engines, several endpoints): true = they add up
  // (requests), false = the largest counts (a usage fraction, a lag).
  bool additive;
};
const std::vector<KnownMetric>& known_metrics();

// Which scrapes a summary covers, and how its time series are timed.
struct SummaryOptions {
  int64_t from_ns = INT64_MIN;  // scrapes from here to `to_ns` (inclusive)
  int64_t to_ns = INT64_MAX;
  bool with_timeseries = false;  // each series also carries its values: [t (s), value]
  int64_t origin_ns = 0;         // t = (scrape time − origin) in seconds
  double interval_s = 0;         // recorded in the summary
};

// The result JSON's `servebench.server_metrics`: per endpoint, per metric family, per series
// (label set) the statistics above; and `headline`, the known metrics over every series and
// endpoint as flat keys for tables and `compare` ("kv_cache_usage_pct_max", "preemptions",
// "ttft_ms_p99", …): gauges per scrape summed (or the largest, see KnownMetric) then `_mean` and
// `_max` (several endpoints: their means and maxima added); counters' increases added, with
// `_per_s`; histograms' bucket increases merged, then `_mean`, `_p50`, `_p99`.
nlohmann::json summarize(const std::vector<EndpointSeries>& endpoints,
                         const SummaryOptions& options);

// vLLM's speculative-decoding figures over a run, as `vllm bench serve` reports them
// (vllm/benchmarks/serve.py, fetch_spec_decode_metrics and its caller): the increase, from each
// endpoint's first scrape to its last, of the `vllm:spec_decode_*_total` counters (summed over
// label sets and endpoints): drafts, draft tokens, accepted tokens, and accepted tokens per
// draft position (label `position`). acceptance_rate = 100·accepted / draft tokens;
// acceptance_length = 1 + accepted / drafts (0 without drafts); per-position rates = accepted at
// the position / drafts. Absent (nullopt) when no endpoint has such counters or no draft token
// was proposed during the run, as in vLLM.
struct SpecDecodeStats {
  int64_t num_drafts = 0, draft_tokens = 0, accepted_tokens = 0;
  double acceptance_rate = 0, acceptance_length = 0;
  std::vector<double> per_position_acceptance_rates;  // position 0, 1, …
};
std::optional<SpecDecodeStats> spec_decode_stats(const std::vector<EndpointSeries>& endpoints);

// Prometheus' histogram_quantile over cumulative bucket counts (upper bounds ascending, the
// last +Inf): linear interpolation inside the bucket holding rank q·count; the lower bound of
// the first bucket is 0 (when its upper bound is positive); a rank in the +Inf bucket gives
// the highest finite bound. NaN when the count is 0.
double histogram_quantile(double q, const std::vector<std::pair<double, double>>& buckets);

}  // namespace servebench::server_metrics
