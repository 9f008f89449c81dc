// Scrapes → per-series statistics over the benchmark window (server_metrics.h says which).
#include <algorithm>
#include <cmath>
#include <limits>

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

}  // namespace

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
  nlohmann::json out = {{"interval_s", options.interval_s}, {"endpoints", nlohmann::json::array()}};
  for (const EndpointSeries& endpoint : endpoints) {
    size_t in_window = 0;
    for (const Scrape& s : endpoint.scrapes) in_window += s.t_ns >= from_ns && s.t_ns <= to_ns;
    nlohmann::json e = {
        {"url", endpoint.url},
        {"scrapes", in_window},
        {"failures", endpoint.failures},
        {"first_error", endpoint.first_error.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json(endpoint.first_error)},
        {"metrics", nlohmann::json::object()}};
    for (const auto& [name, family] : collect(endpoint, from_ns, to_ns)) {
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
  return out;
}

}  // namespace servebench::server_metrics
