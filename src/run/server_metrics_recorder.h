// File: run/server_metrics_recorder.h
// --server-metrics: which /metrics pages to scrape during each point, and the scraping around
// its main run (server_metrics part).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "server_metrics/server_metrics.h"

namespace servebench::run {

struct Spec;

// The endpoints to scrape: none for "off"; the target's <base>/metrics for "auto" when it
// answers with Prometheus text (otherwise a notice on stderr and none; for an embedded
// deployment, every frontend's /metrics and one /dcgm/metrics); or the listed URLs,
// each of which must answer (core::Error kNetwork/kInput naming --server-metrics otherwise).
std::optional<server_metrics::SamplerOptions> server_metrics_options(
    const Spec& c, const client::Endpoint& endpoint);

// Scrapes from start() to stop(); does nothing when given no options.
class ServerMetricsRecorder {
 public:
  explicit ServerMetricsRecorder(std::optional<server_metrics::SamplerOptions> options);
  void start();
  // The result's `servebench.server_metrics` (null when off); time series times are seconds
  // after the client's t0 (`t0_mono_ns`), so the baseline scrape is slightly negative.
  nlohmann::json stop(int64_t t0_mono_ns, bool with_timeseries);
  // Between start() and stop(), from any thread: whether scraping is on, and the known
  // metrics' headline (server_metrics::summarize) of each endpoint's last scrape (needs
  // SamplerOptions::keep_latest; an empty object before the first).
  bool scraping() const { return sampler_ != nullptr; }
  nlohmann::json latest_headline() const;
  // After stop(): vLLM's speculative-decoding figures, when the server has them.
  const std::optional<server_metrics::SpecDecodeStats>& spec_decode() const { return spec_decode_; }

 private:
  std::optional<server_metrics::SamplerOptions> options_;
  std::unique_ptr<server_metrics::Sampler> sampler_;
  std::optional<server_metrics::SpecDecodeStats> spec_decode_;
};

}  // namespace servebench::run
