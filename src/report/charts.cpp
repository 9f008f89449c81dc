// Charts of results: runs grouped into series, figures placed on a load or throughput axis, and
// drawn with PLplot's cairo drivers (pngcairo, svgcairo, pdfcairo). docs/reports.md describes
// the choices (series, the load axis, where `inf` goes).
#include "report/charts.h"

#include <plplot.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "report/markup.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

// The row of a name table (kinds, statistics, formats) whose `field` equals `value`, or null.
template <typename Row, size_t N, typename Field, typename Value>
const Row* find_row(const Row (&rows)[N], Field Row::*field, const Value& value) {
  for (const Row& row : rows) {
    if (row.*field == value) return &row;
  }
  return nullptr;
}

// The series a run belongs to under a result key: strings as they are, numbers as Python prints
// them (a `--metadata tp=4` is stored as a string, a vLLM key like max_concurrency as a number).
std::optional<std::string> key_text(const RunResult& run, const std::string& key) {
  const auto it = run.result.find(key);
  if (it == run.result.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return text::python_g(it->get<double>());
  if (it->is_boolean()) return it->get<bool>() ? "True" : "False";
  return std::nullopt;
}

}  // namespace

SeriesRule parse_series_rule(const std::string& text) {
  if (text.empty()) usage("--series-by", "is empty; one of auto, input, name, or a result key");
  if (text == "auto") return {SeriesRule::Kind::kAuto, ""};
  if (text == "input") return {SeriesRule::Kind::kInput, ""};
  if (text == "name") return {SeriesRule::Kind::kName, ""};
  return {SeriesRule::Kind::kKey, text};
}

std::string name_without_load(const std::string& test_name) {
  static const std::regex kLoadSuffix(
      R"(^(.+?)[_-](qps|rate|concurrency|conc|c)[_-]?([0-9]+(\.[0-9]+)?|inf)$)", std::regex::icase);
  std::smatch m;
  if (std::regex_match(test_name, m, kLoadSuffix)) return m[1].str();
  return test_name;
}

SeriesRule resolve_series_rule(std::span<const CompareInput> inputs, const SeriesRule& rule) {
  if (rule.kind != SeriesRule::Kind::kAuto) return rule;
  bool every_run_has_deployment = true;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      every_run_has_deployment = every_run_has_deployment && key_text(run, "deployment");
    }
  }
  if (every_run_has_deployment) return {SeriesRule::Kind::kKey, "deployment"};
  return {inputs.size() > 1 ? SeriesRule::Kind::kInput : SeriesRule::Kind::kName, ""};
}

std::vector<Series> group_series(std::span<const CompareInput> inputs, const SeriesRule& rule) {
  const SeriesRule effective = resolve_series_rule(inputs, rule);
  std::vector<Series> out;
  std::map<std::string, size_t> index_of;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      std::string name;
      switch (effective.kind) {
        case SeriesRule::Kind::kInput:
          name = input.name;
          break;
        case SeriesRule::Kind::kName:
          name = name_without_load(run.test_name);
          break;
        default:
          name = key_text(run, effective.key).value_or("n/a");
      }
      const auto [it, added] = index_of.emplace(name, out.size());
      if (added) out.push_back({name, {}});
      out[it->second].runs.push_back(&run);
    }
  }
  return out;
}

double load_of(const RunResult& run, LoadAxis axis) {
  if (axis == LoadAxis::kRequestRate) return figure(run, "request_rate").value_or(kUnlimited);
  // vLLM writes null for no --max-concurrency; servebench writes null too (result_json.cpp).
  const double c = figure(run, "max_concurrency").value_or(kUnlimited);
  return c > 0 ? c : kUnlimited;
}

LoadAxis choose_load_axis(std::span<const Series> series) {
  std::set<double> rates, concurrencies;
  for (const Series& s : series) {
    for (const RunResult* run : s.runs) {
      rates.insert(load_of(*run, LoadAxis::kRequestRate));
      concurrencies.insert(load_of(*run, LoadAxis::kMaxConcurrency));
    }
  }
  return concurrencies.size() > rates.size() ? LoadAxis::kMaxConcurrency : LoadAxis::kRequestRate;
}

namespace {

struct KindName {
  const char* name;
  ChartKind kind;
};
constexpr KindName kKinds[] = {
    {"throughput", {ChartMetric::kOutputThroughput, ChartX::kLoad}},
    {"ttft", {ChartMetric::kTtft, ChartX::kLoad}},
    {"tpot", {ChartMetric::kTpot, ChartX::kLoad}},
    {"itl", {ChartMetric::kItl, ChartX::kLoad}},
    {"e2el", {ChartMetric::kE2el, ChartX::kLoad}},
    {"ttft-vs-throughput", {ChartMetric::kTtft, ChartX::kOutputThroughput}},
    {"tpot-vs-throughput", {ChartMetric::kTpot, ChartX::kOutputThroughput}},
    {"itl-vs-throughput", {ChartMetric::kItl, ChartX::kOutputThroughput}},
    {"e2el-vs-throughput", {ChartMetric::kE2el, ChartX::kOutputThroughput}},
};

std::string kind_slug(ChartKind kind) {
  const KindName* row = find_row(kKinds, &KindName::kind, kind);
  return row ? row->name : "chart";
}

struct StatName {
  ChartStat stat;
  const char* word;   // in vLLM's keys and on the command line
  const char* title;  // in axis titles
};
constexpr StatName kStats[] = {{ChartStat::kMean, "mean", "Mean"},
                               {ChartStat::kMedian, "median", "Median"},
                               {ChartStat::kP99, "p99", "P99"}};

const StatName& stat_name(ChartStat stat) {
  const StatName* row = find_row(kStats, &StatName::stat, stat);
  return row ? *row : kStats[0];
}

struct MetricNames {
  const char* key;    // vLLM's key stem: "{stat}_{key}_ms"
  const char* label;  // in axis titles
};
MetricNames metric_names(ChartMetric metric) {
  switch (metric) {
    case ChartMetric::kTpot:
      return {"tpot", "TPOT"};
    case ChartMetric::kItl:
      return {"itl", "ITL"};
    case ChartMetric::kE2el:
      return {"e2el", "E2E latency"};
    default:
      return {"ttft", "TTFT"};
  }
}

constexpr const char* kThroughputLabel = "Output throughput (tok/s)";

std::string load_label(LoadAxis axis) {
  return axis == LoadAxis::kRequestRate ? "Request rate (req/s)" : "Max concurrency (requests)";
}

std::string load_text(double load, LoadAxis axis) {
  if (std::isinf(load)) return axis == LoadAxis::kRequestRate ? "inf" : "unlimited";
  return text::python_g(load);
}

// Where loads go on the x axis: a log scale when they span 4x or more (sweeps double or
// quadruple the load), linear otherwise; unlimited one step beyond the largest finite load.
struct LoadScale {
  bool log = false;
  double unlimited_x = 0;
  double x(double load) const {
    if (std::isinf(load)) return unlimited_x;
    return log ? std::log10(load) : load;
  }
};

LoadScale load_scale(const std::set<double>& finite_loads) {
  LoadScale scale;
  if (finite_loads.empty()) return scale;
  const double lo = *finite_loads.begin();
  const double hi = *finite_loads.rbegin();
  scale.log = lo > 0 && hi / lo >= 4;
  const double x_lo = scale.x(lo);
  const double x_hi = scale.x(hi);
  double step = 0;
  if (finite_loads.size() >= 2) {
    step = (x_hi - x_lo) / static_cast<double>(finite_loads.size() - 1);
  } else {
    step = scale.log ? std::log10(2.0) : std::max(1.0, std::fabs(hi));
  }
  scale.unlimited_x = x_hi + step;
  return scale;
}

}  // namespace

std::vector<std::string> chart_kind_names() {
  std::vector<std::string> names;
  for (const KindName& k : kKinds) names.emplace_back(k.name);
  return names;
}

ChartKind parse_chart_kind(const std::string& name) {
  if (const KindName* row = find_row(kKinds, &KindName::name, name)) return row->kind;
  std::string all;
  for (const KindName& k : kKinds) all += std::string(all.empty() ? "" : ", ") + k.name;
  usage("--chart", "'" + name + "' is not a chart; one of: all, " + all);
}

ChartStat parse_chart_stat(const std::string& name) {
  if (const StatName* row = find_row(kStats, &StatName::word, name)) return row->stat;
  usage("--stat", "'" + name + "' is not one of mean, median, p99");
}

const char* chart_stat_name(ChartStat stat) {
  return stat_name(stat).word;
}

ChartData chart_data(std::span<const Series> series, ChartKind kind, ChartStat stat,
                     LoadAxis axis) {
  ChartData chart;
  chart.slug = kind_slug(kind);
  std::string& y_key = chart.y_key;
  if (kind.metric == ChartMetric::kOutputThroughput) {
    y_key = "output_throughput";
    chart.y_label = kThroughputLabel;
  } else {
    const MetricNames names = metric_names(kind.metric);
    y_key = fmt::format("{}_{}_ms", stat_name(stat).word, names.key);
    chart.y_label = fmt::format("{} {} (ms)", stat_name(stat).title, names.label);
  }
  const std::string y_what = chart.y_label.substr(0, chart.y_label.find(" ("));
  if (kind.x == ChartX::kLoad) {
    chart.x_label = load_label(axis);
    chart.title = fmt::format("{} against {}", y_what,
                              axis == LoadAxis::kRequestRate ? "request rate" : "max concurrency");
  } else {
    chart.x_label = kThroughputLabel;
    chart.title = fmt::format("{} against output throughput", y_what);
  }

  // Points as (load, x, y); x is the load itself until the scale is known.
  struct Raw {
    double load, x, y;
  };
  std::vector<std::vector<Raw>> raw(series.size());
  std::set<double> finite_loads;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const RunResult* run : series[i].runs) {
      const auto y = figure(*run, y_key);
      const double load = load_of(*run, axis);
      std::optional<double> x = load;
      if (kind.x == ChartX::kOutputThroughput) x = figure(*run, "output_throughput");
      if (!y || !x || !std::isfinite(*y) || std::isnan(*x)) continue;
      if (kind.x == ChartX::kOutputThroughput && !std::isfinite(*x)) continue;
      raw[i].push_back({load, *x, *y});
      if (std::isfinite(load)) finite_loads.insert(load);
    }
    std::stable_sort(raw[i].begin(), raw[i].end(),
                     [](const Raw& a, const Raw& b) { return a.load < b.load; });
  }

  double x_lo = kUnlimited, x_hi = -kUnlimited;
  bool any_unlimited = false;
  const LoadScale scale = load_scale(finite_loads);
  for (size_t i = 0; i < series.size(); ++i) {
    if (raw[i].empty()) continue;
    ChartLine line;
    line.name = series[i].name;
    for (const Raw& r : raw[i]) {
      const double x = kind.x == ChartX::kLoad ? scale.x(r.load) : r.x;
      const bool off_scale = kind.x == ChartX::kLoad && std::isinf(r.load);
      line.points.push_back({x, r.y, off_scale});
      any_unlimited = any_unlimited || off_scale;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
    }
    chart.lines.push_back(std::move(line));
  }
  if (chart.lines.empty()) return chart;

  if (kind.x == ChartX::kLoad) {
    // A tick at every load measured (thinned past a dozen), so the axis reads like the table.
    std::vector<double> loads(finite_loads.begin(), finite_loads.end());
    const size_t every = (loads.size() + 11) / 12;
    for (size_t i = 0; i < loads.size(); ++i) {
      if (i % every == 0 || i + 1 == loads.size()) {
        chart.x_ticks.push_back({scale.x(loads[i]), load_text(loads[i], axis)});
      }
    }
    if (any_unlimited) {
      chart.x_ticks.push_back({scale.unlimited_x, load_text(kUnlimited, axis)});
    }
    const double span = x_hi > x_lo ? x_hi - x_lo : 1.0;
    chart.x_min = x_lo - 0.05 * span;
    chart.x_max = x_hi + 0.05 * span;
  } else {
    chart.x_min = 0;
    chart.x_max = x_hi > 0 ? x_hi * 1.08 : 1.0;
  }
  return chart;
}

}  // namespace servebench::report
