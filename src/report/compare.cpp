// `servebench compare`: runs side by side, each figure with its difference from and ratio to the
// baseline (the first input). Figures are vLLM's result keys, read through figure(), so a vLLM
// result and a servebench result compare on the same definitions.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "report/report.h"
#include "report/tables.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;

struct MatchedRow {
  std::string test_name;
  std::vector<const RunResult*> runs;  // one per input, nullptr where the input has no such test
};

// A GuideLLM-style benchmark's own name (`run --profile sweep` names its files after vLLM's,
// "openai-10.562029570819835qps-…", but each benchmark "constant@10.56"), an inference-perf
// stage's ("stage_3"), or "".
std::string benchmark_name(const RunResult& run) {
  for (const char* group : {"load", "stage"}) {
    const json* j = &run.result;
    for (const char* key : {"servebench", group, group[0] == 'l' ? "benchmark" : "name"}) {
      if (!j->is_object() || !j->contains(key)) {
        j = nullptr;
        break;
      }
      j = &(*j)[key];
    }
    if (j && j->is_string()) return j->get<std::string>();
  }
  return "";
}

// What a row is called: the first run's test name; for benchmarks of sweeps, the benchmarks'
// names, both when the inputs differ (two sweeps matched by position: constant@0.99 /
// constant@0.93).
std::string row_name(const std::vector<const RunResult*>& runs) {
  std::vector<std::string> names;
  std::string first;
  for (const RunResult* r : runs) {
    if (!r) continue;
    if (first.empty()) first = r->test_name;
    const std::string name = benchmark_name(*r);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  if (names.empty()) return first;
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " / ") + n;
  return out;
}

std::vector<MatchedRow> match_runs(std::span<const CompareInput> inputs, CompareMatch match) {
  std::vector<MatchedRow> rows;
  const bool single_runs = std::all_of(inputs.begin(), inputs.end(),
                                       [](const CompareInput& in) { return in.runs.size() == 1; });
  if (match == CompareMatch::kByOrder || single_runs) {
    // Two single files are compared with each other whatever their names.
    size_t longest = 0;
    for (const CompareInput& in : inputs) longest = std::max(longest, in.runs.size());
    for (size_t i = 0; i < longest; ++i) {
      MatchedRow row;
      for (const CompareInput& in : inputs) {
        row.runs.push_back(i < in.runs.size() ? &in.runs[i] : nullptr);
      }
      row.test_name = row_name(row.runs);
      rows.push_back(std::move(row));
    }
    return rows;
  }
  std::vector<std::string> names;  // the baseline's order, then tests only later inputs have
  for (const CompareInput& in : inputs) {
    for (const RunResult& r : in.runs) {
      if (std::find(names.begin(), names.end(), r.test_name) == names.end()) {
        names.push_back(r.test_name);
      }
    }
  }
  for (const std::string& name : names) {
    MatchedRow row{name, {}};
    for (const CompareInput& in : inputs) {
      const auto it = std::find_if(in.runs.begin(), in.runs.end(),
                                   [&](const RunResult& r) { return r.test_name == name; });
      row.runs.push_back(it == in.runs.end() ? nullptr : &*it);
    }
    row.test_name = row_name(row.runs);
    rows.push_back(std::move(row));
  }
  return rows;
}

struct Line {
  std::string test_name, metric;
  std::vector<std::optional<double>> values;                 // one per input
  std::vector<std::optional<metrics::RepeatStats>> repeats;  // --num-runs results
};

// Whether input i differs from the baseline beyond the runs' noise: Welch's t test of the two
// means over their repeated runs, significant at p < 0.05 (docs/reports.md "compare"). nullopt
// unless both sides were repeated (n >= 2) with some spread.
constexpr double kSignificance = 0.05;
std::optional<metrics::WelchTest> welch(const Line& l, size_t i) {
  if (!l.repeats[0] || !l.repeats[i]) return std::nullopt;
  return metrics::welch_t_test(*l.repeats[0], *l.repeats[i]);
}
std::string significance_text(const std::optional<metrics::WelchTest>& w) {
  if (!w) return "n/a";
  return fmt::format("{} (p={:.3g})", w->p_value < kSignificance ? "yes" : "no", w->p_value);
}
json significance_json(const std::optional<metrics::WelchTest>& w) {
  if (!w) return nullptr;
  return {{"significant", w->p_value < kSignificance},
          {"p_value", w->p_value},
          {"t", w->t},
          {"dof", w->dof}};
}

std::optional<double> delta(const std::optional<double>& base, const std::optional<double>& v) {
  if (!base || !v) return std::nullopt;
  return *v - *base;
}
std::optional<double> ratio(const std::optional<double>& base, const std::optional<double>& v) {
  if (!base || !v || *base == 0) return std::nullopt;
  return *v / *base;
}

std::string shown(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("n/a");
}

std::string value_text(const Line& l, size_t i) {
  if (l.repeats[i]) return plus_minus(*l.repeats[i]);
  return shown(l.values[i], "{:g}");
}

std::string csv_number(const std::optional<double>& v) {
  return v ? text::python_repr(*v) : std::string();
}

json json_number(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

}  // namespace

std::vector<std::string> default_compare_metrics() {
  return {"completed", "failed", "duration", "request_throughput", "output_throughput",
          "total_token_throughput", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
          "median_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "p99_itl_ms",
          "mean_e2el_ms", "median_e2el_ms", "p99_e2el_ms",
          // vLLM's latency and throughput tests (seconds, as their results keep them)
          "avg_latency", "percentiles.50", "percentiles.99", "num_requests", "total_num_tokens",
          "elapsed_time", "requests_per_second", "tokens_per_second"};
}

std::string compare_runs(std::span<const CompareInput> inputs,
                         const std::vector<std::string>& metrics, CompareMatch match,
                         CompareFormat format) {
  const bool named = !metrics.empty();
  const std::vector<std::string> keys = named ? metrics : default_compare_metrics();
  std::vector<Line> lines;
  for (const MatchedRow& row : match_runs(inputs, match)) {
    for (const std::string& key : keys) {
      Line line{row.test_name, key, {}, {}};
      for (const RunResult* r : row.runs) {
        line.values.push_back(r ? figure(*r, key) : std::nullopt);
        line.repeats.push_back(r ? repeat_figure(*r, key) : std::nullopt);
      }
      // A default figure no input carries (e2el without --percentile-metrics, say) is noise.
      const bool any = std::any_of(line.values.begin(), line.values.end(),
                                   [](const auto& v) { return v.has_value(); });
      if (named || any) lines.push_back(std::move(line));
    }
  }
  const std::string& base = inputs.front().name;
  // Repeated runs on both sides of some row: each input gets a "significant" column.
  bool tested = false;
  for (const Line& l : lines) {
    for (size_t i = 1; i < inputs.size(); ++i) tested = tested || welch(l, i).has_value();
  }
  if (format == CompareFormat::kJson) {
    json names = json::array();
    for (const CompareInput& in : inputs) names.push_back(in.name);
    json rows = json::array();
    for (const Line& l : lines) {
      json values = json::object(), deltas = json::object(), ratios = json::object();
      json intervals = json::object(), tests = json::object();
      for (size_t i = 0; i < inputs.size(); ++i) {
        values[inputs[i].name] = json_number(l.values[i]);
        if (l.repeats[i]) {
          intervals[inputs[i].name] = {{"mean", l.repeats[i]->mean},
                                       {"sd", l.repeats[i]->sd},
                                       {"ci95_low", l.repeats[i]->ci_low},
                                       {"ci95_high", l.repeats[i]->ci_high},
                                       {"n", l.repeats[i]->n}};
        }
        if (i == 0) continue;
        deltas[inputs[i].name] = json_number(delta(l.values[0], l.values[i]));
        ratios[inputs[i].name] = json_number(ratio(l.values[0], l.values[i]));
        if (tested) tests[inputs[i].name] = significance_json(welch(l, i));
      }
      json row = {{"test_name", l.test_name},
                  {"metric", l.metric},
                  {"values", values},
                  {"delta", deltas},
                  {"ratio", ratios}};
      if (!intervals.empty()) row["repeats"] = std::move(intervals);
      if (tested) row["welch"] = std::move(tests);
      rows.push_back(std::move(row));
    }
    json out{{"baseline", base}, {"inputs", names}, {"rows", rows}};
    make_valid_utf8(out);  // input names come from file names, which need not be UTF-8
    return out.dump(2) + "\n";
  }
  std::vector<std::string> headers = {"Test name", "Metric", inputs.front().name};
  for (size_t i = 1; i < inputs.size(); ++i) {
    headers.push_back(inputs[i].name);
    headers.push_back(inputs[i].name + " - " + base);
    headers.push_back(inputs[i].name + " / " + base);
    if (tested) headers.push_back(inputs[i].name + " significant (Welch)");
  }
  if (format == CompareFormat::kCsv) {
    std::string out;
    for (size_t i = 0; i < headers.size(); ++i) out += (i ? "," : "") + text::csv_field(headers[i]);
    out += "\n";
    for (const Line& l : lines) {
      out += text::csv_field(l.test_name) + "," + l.metric + "," + csv_number(l.values[0]);
      for (size_t i = 1; i < inputs.size(); ++i) {
        out += "," + csv_number(l.values[i]) + "," + csv_number(delta(l.values[0], l.values[i])) +
               "," + csv_number(ratio(l.values[0], l.values[i]));
        if (tested) {
          const auto w = welch(l, i);
          out += "," + (w ? std::string(w->p_value < kSignificance ? "yes" : "no") : "");
        }
      }
      out += "\n";
    }
    return out;
  }
  std::vector<text::Row> rows;
  for (const Line& l : lines) {
    // "mean ± half-width" is text: a column holding one is left-aligned as a whole.
    text::Row row = {
        {l.test_name, false}, {l.metric, false}, {value_text(l, 0), !l.repeats[0].has_value()}};
    for (size_t i = 1; i < inputs.size(); ++i) {
      row.push_back({value_text(l, i), !l.repeats[i].has_value()});
      row.push_back({shown(delta(l.values[0], l.values[i]), "{:+g}"), true});
      row.push_back({shown(ratio(l.values[0], l.values[i]), "{:.3f}"), true});
      if (tested) row.push_back({significance_text(welch(l, i)), false});
    }
    rows.push_back(std::move(row));
  }
  return text::tabulate_pipe(headers, rows);
}

}  // namespace servebench::report
