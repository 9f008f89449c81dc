// Scrapes → per-series statistics over the benchmark window (server_metrics.h says which).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/json_text.h"
#include "metrics/metrics.h"
#include "server_metrics/server_metrics.h"

namespace servebench::server_metrics {

namespace {

struct Points {
  std::vector<int64_t> t_ns;
  std::vector<double> values;
  void add(int64_t t, double v) {
    t_ns.push_back(t);
    values.push_back(v);
  }
};

struct Histogram {
  std::map<double, Points> buckets;  // by upper bound
  Points sum, count;
};

struct Family {
  MetricType type = MetricType::kUntyped;
  std::map<std::string, Points> series;        // gauge, counter, untyped, summary quantiles
  std::map<std::string, Points> summary_sums;  // a summary's _sum / _count, as counters
  std::map<std::string, Points> summary_counts;
  std::map<std::string, Histogram> histograms;  // by labels without `le`
};

// `le` taken out of a bucket's labels: the bound, and the labels of the histogram it belongs to.
std::pair<double, std::string> split_bucket(const std::string& canonical) {
  double bound = std::numeric_limits<double>::quiet_NaN();
  std::string rest;
  for (const auto& [name, value] : split_labels(canonical)) {
    if (name == "le") {
      if (value == "+Inf" || value == "Inf") {
        bound = std::numeric_limits<double>::infinity();
      } else {
        char* end = nullptr;
        bound = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0') bound = std::numeric_limits<double>::quiet_NaN();
      }
      continue;
    }
    if (!rest.empty()) rest += ',';
    rest += name + "=\"";
    for (char c : value) {
      if (c == '\\' || c == '"') rest += '\\';
      rest += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    rest += '"';
  }
  return {bound, rest};
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() > suffix.size() &&
         std::string_view(text).substr(text.size() - suffix.size()) == suffix;
}

// Prometheus' increase() without extrapolation: the sum of the rises, a drop being a restart
// of the counter (its new value is all rise).
double increase(const Points& p) {
  double total = 0;
  for (size_t i = 1; i < p.values.size(); ++i) {
    double d = p.values[i] - p.values[i - 1];
    total += d >= 0 ? d : p.values[i];
  }
  return total;
}

double span_s(const Points& p) {
  return p.t_ns.size() < 2 ? 0 : static_cast<double>(p.t_ns.back() - p.t_ns.front()) / 1e9;
}

nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json labels_json(const std::string& canonical) {
  nlohmann::json out = nlohmann::json::object();
  for (auto& [name, value] : split_labels(canonical)) out[name] = value;
  return out;
}

nlohmann::json timeseries(const Points& p, int64_t origin_ns) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < p.values.size(); ++i)
    out.push_back({static_cast<double>(p.t_ns[i] - origin_ns) / 1e9, number(p.values[i])});
  return out;
}

nlohmann::json gauge_stats(const Points& p) {
  std::vector<double> finite;
  for (double v : p.values)
    if (std::isfinite(v)) finite.push_back(v);
  const metrics::Distribution d = metrics::summarize(finite, {50, 90, 99});
  nlohmann::json j = {{"samples", p.values.size()}};
  if (finite.empty()) return j;
  j["mean"] = d.mean;
  j["min"] = d.min;
  j["max"] = d.max;
  for (const auto& [q, v] : d.percentiles) j["p" + metrics::percentile_word(q)] = v;
  j["first"] = number(p.values.front());
  j["last"] = number(p.values.back());
  return j;
}

nlohmann::json counter_stats(const Points& p) {
  const double inc = increase(p);
  const double span = span_s(p);
  return {{"samples", p.values.size()},
          {"increase", inc},
          {"rate_per_s", span > 0 ? nlohmann::json(inc / span) : nlohmann::json(nullptr)}};
}

nlohmann::json histogram_stats(const Histogram& h) {
  std::vector<std::pair<double, double>> buckets;
  for (const auto& [bound, points] : h.buckets) buckets.emplace_back(bound, increase(points));
  const double count = increase(h.count);
  const double sum = increase(h.sum);
  nlohmann::json j = {{"samples", h.count.values.size()}, {"count", count}, {"sum", sum}};
  j["mean"] = count > 0 ? nlohmann::json(sum / count) : nlohmann::json(nullptr);
  for (double p : {50.0, 90.0, 99.0})
    j["p" + metrics::percentile_word(p)] = number(histogram_quantile(p / 100, buckets));
  return j;
}

const char* type_name(MetricType type) {
  switch (type) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kUntyped:
      break;
  }
  return "untyped";
}

// `x_created` next to a typed `x` or `x_total`: when the counter or histogram began (a
// timestamp that prometheus_client adds, not a value of the run).
bool is_creation_time(const Exposition& exposition, const std::string& name) {
  if (!ends_with(name, "_created")) return false;
  const std::string base = name.substr(0, name.size() - 8);
  return exposition.types.count(base) > 0 || exposition.types.count(base + "_total") > 0;
}

std::map<std::string, Family> collect(const EndpointSeries& endpoint, int64_t from_ns,
                                      int64_t to_ns) {
  std::map<std::string, Family> families;
  for (const Scrape& scrape : endpoint.scrapes) {
    if (scrape.t_ns < from_ns || scrape.t_ns > to_ns) continue;
    for (const Sample& s : scrape.exposition.samples) {
      if (is_creation_time(scrape.exposition, s.name)) continue;
      auto [family_name, type] = family_of(scrape.exposition, s.name);
      Family& f = families[family_name];
      f.type = type;
      if (type == MetricType::kHistogram) {
        if (ends_with(s.name, "_bucket")) {
          auto [bound, rest] = split_bucket(s.labels);
          if (!std::isnan(bound)) f.histograms[rest].buckets[bound].add(scrape.t_ns, s.value);
        } else if (ends_with(s.name, "_sum")) {
          f.histograms[s.labels].sum.add(scrape.t_ns, s.value);
        } else if (ends_with(s.name, "_count")) {
          f.histograms[s.labels].count.add(scrape.t_ns, s.value);
        }
      } else if (type == MetricType::kSummary && s.name != family_name) {
        if (ends_with(s.name, "_sum")) f.summary_sums[s.labels].add(scrape.t_ns, s.value);
        if (ends_with(s.name, "_count")) f.summary_counts[s.labels].add(scrape.t_ns, s.value);
      } else {
        f.series[s.labels].add(scrape.t_ns, s.value);
      }
    }
  }
  return families;
}

// One known metric over one endpoint's series, and then over every endpoint (headline()).
struct HeadlineParts {
  bool found = false;
  MetricType type = MetricType::kUntyped;
  double mean = 0, max = 0;          // gauges
  double increase = 0, per_s = 0;    // counters
  std::map<double, double> buckets;  // histograms: bucket increases by upper bound
  double count = 0, sum = 0;
};

void add_endpoint(const KnownMetric& known, const std::map<std::string, Family>& families,
                  HeadlineParts& total) {
  for (const char* name : known.names) {
    const auto it = families.find(name);
    if (it == families.end()) continue;
    const Family& f = it->second;
    if (f.type == MetricType::kHistogram) {
      for (const auto& [labels, h] : f.histograms) {
        for (const auto& [bound, points] : h.buckets) total.buckets[bound] += increase(points);
        total.count += increase(h.count);
        total.sum += increase(h.sum);
      }
    } else if (f.type == MetricType::kCounter) {
      double inc = 0, span = 0;
      for (const auto& [labels, points] : f.series) {
        inc += increase(points);
        span = std::max(span, span_s(points));
      }
      total.increase += inc;
      total.per_s += span > 0 ? inc / span : 0;
    } else {
      // Per scrape, the series summed (or the largest), then over the scrapes.
      std::map<int64_t, double> per_scrape;
      for (const auto& [labels, points] : f.series) {
        for (size_t i = 0; i < points.values.size(); ++i) {
          if (!std::isfinite(points.values[i])) continue;
          auto [at, fresh] = per_scrape.emplace(points.t_ns[i], points.values[i]);
          if (!fresh)
            at->second = known.additive ? at->second + points.values[i]
                                        : std::max(at->second, points.values[i]);
        }
      }
      if (per_scrape.empty()) return;
      double sum = 0, max = -std::numeric_limits<double>::infinity();
      for (const auto& [t, v] : per_scrape) {
        sum += v;
        max = std::max(max, v);
      }
      const double mean = sum / static_cast<double>(per_scrape.size());
      if (known.additive || !total.found) {
        total.mean += mean;
        total.max += max;
      } else {
        total.mean = std::max(total.mean, mean);
        total.max = std::max(total.max, max);
      }
    }
    total.found = true;
    total.type = f.type;
    return;  // the first name the server exposes
  }
}

void put_headline(const KnownMetric& known, const HeadlineParts& h, nlohmann::json& out) {
  const std::string key = known.key;
  const double k = known.scale;
  if (h.type == MetricType::kHistogram) {
    std::vector<std::pair<double, double>> cumulative(h.buckets.begin(), h.buckets.end());
    out[key + "_mean"] = h.count > 0 ? number(h.sum / h.count * k) : nlohmann::json(nullptr);
    out[key + "_p50"] = number(histogram_quantile(0.5, cumulative) * k);
    out[key + "_p99"] = number(histogram_quantile(0.99, cumulative) * k);
  } else if (h.type == MetricType::kCounter) {
    out[key] = h.increase * k;
    out[key + "_per_s"] = h.per_s * k;
  } else {
    out[key + "_mean"] = h.mean * k;
    out[key + "_max"] = h.max * k;
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> split_labels(const std::string& canonical) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < canonical.size()) {
    size_t eq = canonical.find('=', i);
    std::string name = canonical.substr(i, eq - i);
    std::string value;
    size_t j = eq + 2;  // past ="
    for (; j < canonical.size() && canonical[j] != '"'; ++j) {
      if (canonical[j] == '\\' && j + 1 < canonical.size()) {
        ++j;
        value.push_back(canonical[j] == 'n' ? '\n' : canonical[j]);
      } else {
        value.push_back(canonical[j]);
      }
    }
    out.emplace_back(std::move(name), std::move(value));
    i = j + 2;  // past the quote and the comma
  }
  return out;
}

const std::vector<KnownMetric>& known_metrics() {
  static const std::vector<KnownMetric> known = {
      {"running_requests",
       "Running requests",
       {"vllm:num_requests_running", "sglang:num_running_reqs", "tgi_batch_current_size",
        "dynamo_frontend_inflight_requests"},
       1,
       true},
      {"waiting_requests",
       "Waiting requests",
       {"vllm:num_requests_waiting", "sglang:num_queue_reqs", "tgi_queue_size",
        "dynamo_frontend_queued_requests"},
       1,
       true},
      {"kv_cache_usage_pct",
       "KV cache usage (%)",
       {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"},
       100,
       false},
      {"preemptions",
       "Preemptions",
       {"vllm:num_preemptions_total", "vllm:num_preemptions"},
       1,
       true},
      {"prompt_tokens",
       "Prompt tokens",
       {"vllm:prompt_tokens_total", "vllm:prompt_tokens", "sglang:prompt_tokens_total"},
       1,
       true},
      {"generation_tokens",
       "Generation tokens",
       {"vllm:generation_tokens_total", "vllm:generation_tokens", "sglang:generation_tokens_total"},
       1,
       true},
      {"ttft_ms",
       "Server TTFT (ms)",
       {"vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"},
       1000,
       true},
      {"itl_ms",
       "Server ITL (ms)",
       {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds",
        "sglang:inter_token_latency_seconds"},
       1000,
       true},
      {"e2e_latency_ms",
       "Server E2E latency (ms)",
       {"vllm:e2e_request_latency_seconds", "sglang:e2e_request_latency_seconds"},
       1000,
       true},
      {"sim_emission_lag_ms",
       "Sim emission lag (ms)",
       {"servebench_sim:emission_lag_seconds"},
       1000,
       true},
      {"sim_emission_lag_max_ms",
       "Sim emission lag max (ms)",
       {"servebench_sim:emission_lag_max_seconds"},
       1000,
       false},
  };
  return known;
}

double histogram_quantile(double q, const std::vector<std::pair<double, double>>& buckets) {
  if (buckets.empty() || !std::isinf(buckets.back().first)) return std::nan("");
  const double count = buckets.back().second;
  if (!(count > 0)) return std::nan("");
  const double rank = q * count;
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].second < rank) continue;
    if (std::isinf(buckets[i].first)) return i > 0 ? buckets[i - 1].first : std::nan("");
    const double upper = buckets[i].first;
    if (i == 0 && upper <= 0) return upper;
    const double lower = i > 0 ? buckets[i - 1].first : 0.0;
    const double below = i > 0 ? buckets[i - 1].second : 0;
    const double in_bucket = buckets[i].second - below;
    if (in_bucket <= 0) return upper;
    return lower + (upper - lower) * (rank - below) / in_bucket;
  }
  return buckets.size() > 1 ? buckets[buckets.size() - 2].first : std::nan("");
}

nlohmann::json summarize(const std::vector<EndpointSeries>& endpoints,
                         const SummaryOptions& options) {
  const int64_t from_ns = options.from_ns, to_ns = options.to_ns;
  const bool with_timeseries = options.with_timeseries;
  nlohmann::json out = {{"interval_s", options.interval_s},
                        {"headline", nlohmann::json::object()},
                        {"endpoints", nlohmann::json::array()}};
  std::vector<HeadlineParts> headline(known_metrics().size());
  for (const EndpointSeries& endpoint : endpoints) {
    size_t in_window = 0;
    for (const Scrape& s : endpoint.scrapes) in_window += s.t_ns >= from_ns && s.t_ns <= to_ns;
    nlohmann::json e = {
        {"url", core::valid_utf8_text(endpoint.url)},
        {"scrapes", in_window},
        {"failures", endpoint.failures},
        {"first_error", endpoint.first_error.empty()
                            ? nlohmann::json(nullptr)
                            : nlohmann::json(core::valid_utf8_text(endpoint.first_error))},
        {"metrics", nlohmann::json::object()}};
    const std::map<std::string, Family> families = collect(endpoint, from_ns, to_ns);
    for (size_t k = 0; k < headline.size(); ++k)
      add_endpoint(known_metrics()[k], families, headline[k]);
    for (const auto& [name, family] : families) {
      nlohmann::json series = nlohmann::json::array();
      for (const auto& [labels, points] : family.series) {
        nlohmann::json j =
            family.type == MetricType::kCounter ? counter_stats(points) : gauge_stats(points);
        j["labels"] = labels_json(labels);
        if (with_timeseries) j["timeseries"] = timeseries(points, options.origin_ns);
        series.push_back(std::move(j));
      }
      for (const auto& [labels, h] : family.histograms) {
        nlohmann::json j = histogram_stats(h);
        j["labels"] = labels_json(labels);
        if (with_timeseries) j["count_timeseries"] = timeseries(h.count, options.origin_ns);
        series.push_back(std::move(j));
      }
      for (const auto& [labels, points] : family.summary_counts) {
        nlohmann::json j = {
            {"labels", labels_json(labels)},
            {"count", increase(points)},
            {"sum",
             family.summary_sums.count(labels) ? increase(family.summary_sums.at(labels)) : 0.0}};
        series.push_back(std::move(j));
      }
      e["metrics"][name] = {{"type", type_name(family.type)}, {"series", std::move(series)}};
    }
    out["endpoints"].push_back(std::move(e));
  }
  for (size_t k = 0; k < headline.size(); ++k) {
    if (headline[k].found) put_headline(known_metrics()[k], headline[k], out["headline"]);
  }
  return out;
}

}  // namespace servebench::server_metrics
