// --server-metrics: what to scrape, and the scraping around each main run.
#include "run/server_metrics_recorder.h"

#include <cstdio>

#include "core/error.h"
#include "run/names.h"
#include "run/run.h"
#include "run/server_timeline.h"

namespace servebench::run {

namespace {

// The server's root: the request URL without the --endpoint path ("http://h:8000" for
// "http://h:8000/v1/completions"), so a base URL with a path prefix keeps it.
std::string server_root(const Spec& c, const std::string& url) {
  if (url.size() > c.endpoint.size() &&
      url.compare(url.size() - c.endpoint.size(), c.endpoint.size(), c.endpoint) == 0)
    return url.substr(0, url.size() - c.endpoint.size());
  const size_t scheme = url.find("://");
  const size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return url.substr(0, path);
}

// --server-metrics "URL,URL" (the command line checked the list's form, not the URLs).
std::vector<std::string> server_metrics_urls(const std::string& text) {
  std::vector<std::string> urls;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    urls.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (urls.back().empty())
      throw core::Error(core::ErrorKind::kUsage, "--server-metrics",
                        "empty value in the list '" + text + "'");
    if (comma == std::string::npos) return urls;
    start = comma + 1;
  }
}

server_metrics::SamplerTarget target_for(const std::string& url) {
  return {url, url_for_messages(url)};
}

// An embedded deployment: every frontend's /metrics (its frontend series and its workers'
// vLLM series) and the DCGM exporter, which every frontend serves for all GPUs, once.
std::vector<server_metrics::SamplerTarget> deployment_targets(const Spec::Deployment& d) {
  std::vector<server_metrics::SamplerTarget> targets;
  for (const std::string& url : d.frontend_urls) targets.push_back(target_for(url + "/metrics"));
  targets.push_back(target_for(d.frontend_urls.front() + "/dcgm/metrics"));
  return targets;
}

}  // namespace

std::optional<server_metrics::SamplerOptions> server_metrics_options(
    const Spec& c, const client::Endpoint& endpoint) {
  if (c.server_metrics == "off") return std::nullopt;
  server_metrics::SamplerOptions options;
  options.interval_s = c.server_metrics_interval_s;
  options.headers = c.headers;
  options.insecure = c.insecure;
  options.ca_file = client::ca_file_for(endpoint);
  if (c.server_metrics == "auto") {
    options.targets = c.deployment
                          ? deployment_targets(*c.deployment)
                          : std::vector{target_for(server_root(c, endpoint.url) + "/metrics")};
    try {
      server_metrics::probe(options.targets[0], options);
    } catch (const core::Error& e) {
      std::fprintf(stderr,
                   "servebench: no server metrics: %s (--server-metrics off skips the look)\n",
                   core::redact_secrets(e.what()).c_str());
      return std::nullopt;
    }
    return options;
  }
  for (const std::string& url : server_metrics_urls(c.server_metrics)) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      throw core::Error(
          core::ErrorKind::kUsage, "--server-metrics",
          "expected auto, off or http(s):// URLs, got '" + url_for_messages(url) + "'");
    }
    options.targets.push_back(target_for(url));
  }
  for (const auto& target : options.targets) {
    try {
      server_metrics::probe(target, options);
    } catch (const core::Error& e) {
      throw core::Error(e.kind(), "--server-metrics", core::redact_secrets(e.what()));
    }
  }
  return options;
}

ServerMetricsRecorder::ServerMetricsRecorder(std::optional<server_metrics::SamplerOptions> options)
    : options_(std::move(options)) {}

void ServerMetricsRecorder::start() {
  if (!options_) return;
  sampler_ = std::make_unique<server_metrics::Sampler>(*options_);
  sampler_->start();
}

nlohmann::json ServerMetricsRecorder::latest_headline() const {
  if (!sampler_) return nlohmann::json::object();
  return server_metrics::summarize(sampler_->latest(), {})
      .value("headline", nlohmann::json::object());
}

nlohmann::json ServerMetricsRecorder::stop(int64_t t0_mono_ns, bool with_timeseries) {
  if (!sampler_) return nullptr;
  const std::vector<server_metrics::EndpointSeries> series = sampler_->stop();
  sampler_.reset();
  spec_decode_ = server_metrics::spec_decode_stats(series);
  server_metrics::SummaryOptions summary;
  summary.interval_s = options_->interval_s;
  summary.with_timeseries = with_timeseries;
  summary.origin_ns = t0_mono_ns;  // record times are after t0 too
  nlohmann::json out = server_metrics::summarize(series, summary);
  add_server_timelines(out, series, t0_mono_ns, with_timeseries);  // always; buckets if detailed
  return out;
}

}  // namespace servebench::run
