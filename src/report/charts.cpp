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
#include "report/guidellm_layout.h"
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
  // GuideLLM's benchmark names, as an imported report's runs are called
  // ("benchmarks_constant@0.99").
  static const std::regex kGuidellmSuffix(
      R"(^(.+?)_(synchronous|throughput|(constant|poisson|concurrent)@[0-9.]+)$)");
  std::smatch m;
  if (std::regex_match(test_name, m, kLoadSuffix)) return m[1].str();
  if (std::regex_match(test_name, m, kGuidellmSuffix)) return m[1].str();
  return test_name;
}

SeriesRule resolve_series_rule(std::span<const CompareInput> inputs, const SeriesRule& rule) {
  if (rule.kind != SeriesRule::Kind::kAuto) return rule;
  // The tables make one block per label (seed 004's layout): series follow them, so that three
  // ISL:OSL sweeps of one deployment are three lines, not one zig-zag. "deployment" serves when
  // it tells more runs apart than the labels do, or when labels are missing.
  bool every_run_has_deployment = true, every_run_has_label = true;
  std::set<std::string> deployments, labels;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      const auto deployment = key_text(run, "deployment");
      const auto label = key_text(run, "label");
      every_run_has_deployment = every_run_has_deployment && deployment;
      every_run_has_label = every_run_has_label && label && !label->empty();
      if (deployment) deployments.insert(*deployment);
      if (label) labels.insert(*label);
    }
  }
  if (every_run_has_label && every_run_has_deployment && labels.size() > 1 &&
      deployments.size() > 1 && labels.size() != deployments.size()) {
    return {SeriesRule::Kind::kKey, "deployment+label"};  // both vary: one line per pair
  }
  if (every_run_has_label && (!every_run_has_deployment || labels.size() >= deployments.size())) {
    return {SeriesRule::Kind::kKey, "label"};
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
          if (const size_t plus = effective.key.find('+'); plus != std::string::npos) {
            name = key_text(run, effective.key.substr(0, plus)).value_or("n/a") + " · " +
                   key_text(run, effective.key.substr(plus + 1)).value_or("n/a");
          } else {
            name = key_text(run, effective.key).value_or("n/a");
          }
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

// A load on a tick: at most three significant digits (a sweep's rates are 10.562029570819835
// and the like), no exponent.
std::string tick_number(double load) {
  if (std::fabs(load) >= 100) return fmt::format("{:.0f}", load);
  std::string s = fmt::format("{:.3g}", load);
  if (s.find('e') != std::string::npos) s = fmt::format("{:.3f}", load);
  return s;
}

constexpr double kSynchronous = -std::numeric_limits<double>::infinity();

std::string load_text(double load, LoadAxis axis) {
  if (load == kSynchronous) return "sync";
  if (std::isinf(load)) return axis == LoadAxis::kRequestRate ? "inf" : "unlimited";
  return tick_number(load);
}

// Where a run goes on the load axis: its load, or on a rate axis kSynchronous for one request at
// a time (rate inf and concurrency 1: GuideLLM's synchronous), which is the lightest load, not
// the heaviest.
double placed_load(const RunResult& run, LoadAxis axis) {
  const double load = load_of(run, axis);
  if (axis == LoadAxis::kRequestRate && std::isinf(load) &&
      load_of(run, LoadAxis::kMaxConcurrency) == 1) {
    return kSynchronous;
  }
  return load;
}

// The point's label on a throughput axis.
std::string point_label(const RunResult& run, LoadAxis axis) {
  const double load = placed_load(run, axis);
  if (load == kSynchronous) return "sync";
  if (std::isinf(load) && benchmark_name(run) == "throughput") return "throughput";
  if (axis == LoadAxis::kMaxConcurrency) return "c=" + load_text(load, axis);
  return "@" + load_text(load, axis);
}

// "Model · deployments · prompts" of the runs drawn, each part's distinct values.
std::string runs_subtitle(std::span<const Series> series) {
  std::vector<std::string> models, deployments;
  std::set<double> prompts, completed;
  auto add = [](std::vector<std::string>& to, const std::optional<std::string>& v) {
    if (v && !v->empty() && std::find(to.begin(), to.end(), *v) == to.end()) to.push_back(*v);
  };
  for (const Series& s : series) {
    for (const RunResult* run : s.runs) {
      add(models, key_text(*run, "model_id"));
      auto deployment = key_text(*run, "deployment");
      if (!deployment) deployment = key_text(*run, "label");
      add(deployments, deployment);
      if (const auto n = figure(*run, "num_prompts")) {
        prompts.insert(*n);
      } else if (const auto c = figure(*run, "completed")) {
        completed.insert(*c);  // a timed benchmark (GuideLLM's) has no prompt count
      }
    }
  }
  auto joined = [](const std::vector<std::string>& v, size_t most) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < most; ++i) out += (i ? ", " : "") + v[i];
    if (v.size() > most) out += fmt::format(" and {} more", v.size() - most);
    return out;
  };
  std::vector<std::string> parts;
  if (!models.empty()) parts.push_back("Model: " + joined(models, 2));
  // Deployments the legend already names (one series each) are not listed again.
  std::set<std::string> series_names;
  for (const Series& s : series) series_names.insert(s.name);
  if (!deployments.empty() &&
      std::set<std::string>(deployments.begin(), deployments.end()) == series_names) {
    parts.push_back(fmt::format("{} deployments (legend)", deployments.size()));
  } else if (!deployments.empty()) {
    parts.push_back("Deployment: " + joined(deployments, 3));
  }
  auto count = [&parts](const std::set<double>& n, const char* what) {
    if (n.empty()) return;
    const auto lo = static_cast<int64_t>(*n.begin()), hi = static_cast<int64_t>(*n.rbegin());
    parts.push_back(lo == hi ? fmt::format("{} {}", lo, what)
                             : fmt::format("{}-{} {}", lo, hi, what));
  };
  count(prompts, "prompts");
  count(completed, "completed requests");
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "  |  ") + p;
  return out;
}

// Where loads go on the x axis: a log scale when they span 4x or more (sweeps double or
// quadruple the load), linear otherwise; unlimited one step beyond the largest finite load.
struct LoadScale {
  bool log = false;
  double unlimited_x = 0, synchronous_x = 0;
  double x(double load) const {
    if (load == kSynchronous) return synchronous_x;
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
  // Room for the tick: many close loads (two sweeps' rates interleaved) make a small step.
  step = std::max(step, 0.15 * (x_hi - x_lo));
  scale.unlimited_x = x_hi + step;
  scale.synchronous_x = x_lo - step;
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
    std::string label;
  };
  std::vector<std::vector<Raw>> raw(series.size());
  std::set<double> finite_loads;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const RunResult* run : series[i].runs) {
      const auto y = figure(*run, y_key);
      const double load = placed_load(*run, axis);
      std::optional<double> x = load;
      if (kind.x == ChartX::kOutputThroughput) x = figure(*run, "output_throughput");
      if (!y || !x || !std::isfinite(*y) || std::isnan(*x)) continue;
      if (kind.x == ChartX::kOutputThroughput && !std::isfinite(*x)) continue;
      raw[i].push_back(
          {load, *x, *y, kind.x == ChartX::kOutputThroughput ? point_label(*run, axis) : ""});
      if (std::isfinite(load)) finite_loads.insert(load);
    }
    std::stable_sort(raw[i].begin(), raw[i].end(),
                     [](const Raw& a, const Raw& b) { return a.load < b.load; });
  }

  double x_lo = kUnlimited, x_hi = -kUnlimited;
  bool any_unlimited = false, any_synchronous = false, all_unlimited_throughput = true;
  const LoadScale scale = load_scale(finite_loads);
  for (size_t i = 0; i < series.size(); ++i) {
    if (raw[i].empty()) continue;
    ChartLine line;
    line.name = series[i].name;
    for (const Raw& r : raw[i]) {
      const double x = kind.x == ChartX::kLoad ? scale.x(r.load) : r.x;
      const bool off_scale = kind.x == ChartX::kLoad && std::isinf(r.load);
      line.points.push_back({x, r.y, off_scale});
      if (!r.label.empty()) line.point_labels.push_back(r.label);
      any_unlimited = any_unlimited || (off_scale && r.load > 0);
      any_synchronous = any_synchronous || (off_scale && r.load < 0);
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
    }
    chart.lines.push_back(std::move(line));
  }
  for (const Series& s : series) {
    for (const RunResult* run : s.runs) {
      if (placed_load(*run, axis) == kUnlimited && benchmark_name(*run) != "throughput") {
        all_unlimited_throughput = false;
      }
    }
  }
  if (chart.lines.empty()) return chart;
  chart.subtitle = runs_subtitle(series);

  if (kind.x == ChartX::kLoad) {
    // A tick at every load measured, so the axis reads like the table, less those whose text
    // would run into their left neighbour's (a character takes ~1.4 % of the axis); the ends
    // (sync, the largest load, inf) are kept over their neighbours.
    std::vector<ChartTick> wanted;
    if (any_synchronous) wanted.push_back({scale.synchronous_x, "sync"});
    for (double load : finite_loads) wanted.push_back({scale.x(load), load_text(load, axis)});
    if (any_unlimited) {
      wanted.push_back(
          {scale.unlimited_x, all_unlimited_throughput && axis == LoadAxis::kRequestRate
                                  ? "throughput"
                                  : load_text(kUnlimited, axis)});
    }
    const double axis_span = x_hi > x_lo ? 1.1 * (x_hi - x_lo) : 1.0;
    auto too_close = [&](const ChartTick& a, const ChartTick& b) {
      const double room =
          (0.5 * static_cast<double>(a.text.size() + b.text.size()) + 1.5) * 0.014 * axis_span;
      return b.x - a.x < room;
    };
    for (size_t i = 0; i < wanted.size(); ++i) {
      const bool end = i + 1 == wanted.size();
      if (!chart.x_ticks.empty() && too_close(chart.x_ticks.back(), wanted[i])) {
        if (!end || chart.x_ticks.size() == 1) continue;
        chart.x_ticks.pop_back();  // the last tick wins over its neighbour
      }
      chart.x_ticks.push_back(wanted[i]);
    }
    const double span = x_hi > x_lo ? x_hi - x_lo : 1.0;
    chart.x_min = x_lo - 0.05 * span;
    chart.x_max = x_hi + 0.05 * span;
  } else {
    chart.x_max = x_hi > 0 ? x_hi * 1.08 : 1.0;
    chart.x_min = -0.02 * chart.x_max;  // a point at ~0 (a synchronous run) stays in view
  }
  return chart;
}

}  // namespace servebench::report
