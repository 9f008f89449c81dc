#include "run/server_timeline.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

namespace servebench::run {
namespace {

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The families whose values over time every result keeps.
bool kept(const std::string& family) {
  static const std::set<std::string> known = [] {
    std::set<std::string> names;
    for (const server_metrics::KnownMetric& m : server_metrics::known_metrics())
      for (const char* name : m.names) names.insert(name);
    return names;
  }();
  return known.count(family) > 0 || starts_with(family, "DCGM_") ||
         starts_with(family, "node_network_") || starts_with(family, "node_infiniband_");
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// The values per scrape of the kept gauge, counter and untyped families.
nlohmann::json timeline(const server_metrics::EndpointSeries& endpoint, int64_t t0_mono_ns) {
  using server_metrics::MetricType;
  const size_t n = endpoint.scrapes.size();
  nlohmann::json t_s = nlohmann::json::array();
  std::map<std::string, std::map<std::string, std::vector<double>>> families;
  for (size_t k = 0; k < n; ++k) {
    const server_metrics::Scrape& scrape = endpoint.scrapes[k];
    t_s.push_back(static_cast<double>(scrape.t_ns - t0_mono_ns) / 1e9);
    for (const server_metrics::Sample& s : scrape.exposition.samples) {
      const auto [family, type] = server_metrics::family_of(scrape.exposition, s.name);
      if (type == MetricType::kHistogram || type == MetricType::kSummary) continue;
      if (ends_with(s.name, "_created") || !kept(family)) continue;
      std::vector<double>& values = families[family][s.labels];
      if (values.empty()) values.assign(n, std::nan(""));
      values[k] = s.value;
    }
  }
  nlohmann::json out = {{"t_s", std::move(t_s)}};
  for (const auto& [family, series] : families) {
    nlohmann::json& f = out[family] = nlohmann::json::object();
    for (const auto& [labels, values] : series) {
      nlohmann::json& v = f[labels] = nlohmann::json::array();
      for (double x : values) v.push_back(number_or_null(x));
    }
  }
  return out;
}

// Histogram buckets per scrape: family → labels without `le` (as the summary's `labels`) →
// upper bound → cumulative count per scrape.
using Buckets =
    std::map<std::string, std::map<nlohmann::json, std::map<double, std::vector<double>>>>;

Buckets histogram_buckets(const server_metrics::EndpointSeries& endpoint) {
  Buckets out;
  const size_t n = endpoint.scrapes.size();
  for (size_t k = 0; k < n; ++k) {
    const server_metrics::Scrape& scrape = endpoint.scrapes[k];
    for (const server_metrics::Sample& s : scrape.exposition.samples) {
      if (!ends_with(s.name, "_bucket")) continue;
      const auto [family, type] = server_metrics::family_of(scrape.exposition, s.name);
      if (type != server_metrics::MetricType::kHistogram) continue;
      double bound = std::nan("");
      nlohmann::json labels = nlohmann::json::object();
      for (const auto& [name, value] : server_metrics::split_labels(s.labels)) {
        if (name != "le") {
          labels[name] = value;
        } else if (value == "+Inf" || value == "Inf") {
          bound = INFINITY;
        } else {
          char* end = nullptr;
          bound = std::strtod(value.c_str(), &end);
          if (end == value.c_str() || *end != '\0') bound = std::nan("");
        }
      }
      if (std::isnan(bound)) continue;
      std::vector<double>& counts = out[family][labels][bound];
      if (counts.empty()) counts.assign(n, std::nan(""));
      counts[k] = s.value;
    }
  }
  return out;
}

void add_bucket_timeseries(nlohmann::json& metrics,
                           const server_metrics::EndpointSeries& endpoint) {
  for (const auto& [family, by_labels] : histogram_buckets(endpoint)) {
    if (!metrics.contains(family) || !metrics[family].contains("series")) continue;
    for (nlohmann::json& series : metrics[family]["series"]) {
      const auto found = by_labels.find(series.value("labels", nlohmann::json::object()));
      if (found == by_labels.end()) continue;
      nlohmann::json le = nlohmann::json::array();
      for (const auto& [bound, unused] : found->second)
        le.push_back(std::isinf(bound) ? nlohmann::json("+Inf") : nlohmann::json(bound));
      nlohmann::json counts = nlohmann::json::array();
      for (size_t k = 0; k < endpoint.scrapes.size(); ++k) {
        nlohmann::json row = nlohmann::json::array();
        for (const auto& [bound, values] : found->second) row.push_back(number_or_null(values[k]));
        counts.push_back(std::move(row));
      }
      series["bucket_timeseries"] = {{"le", std::move(le)}, {"counts", std::move(counts)}};
    }
  }
}

}  // namespace

void add_server_timelines(nlohmann::json& summary,
                          const std::vector<server_metrics::EndpointSeries>& endpoints,
                          int64_t t0_mono_ns, bool with_buckets) {
  if (!summary.is_object() || !summary.contains("endpoints")) return;
  nlohmann::json& out = summary["endpoints"];
  for (size_t i = 0; i < endpoints.size() && i < out.size(); ++i) {
    out[i]["timeline"] = timeline(endpoints[i], t0_mono_ns);
    if (with_buckets && out[i].contains("metrics"))
      add_bucket_timeseries(out[i]["metrics"], endpoints[i]);
  }
}

}  // namespace servebench::run
