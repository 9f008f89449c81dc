// The seed layouts filled from results. Which tool's definitions each column follows, and what
// is "n/a" when, is written down in docs/reports.md.
#include "report/tables.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "metrics/metrics.h"
#include "report/guidellm_layout.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using text::Cell;

bool is_integral(double x) {
  return std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 1e15;
}

// ---- vLLM's performance suite (seeds 000 and 002) ----

struct Column {
  const char* header;
  const char* key;  // vLLM's result key
};
// convert-results-json-to-markdown.py's serving_column_mapping in the version behind the seeds.
constexpr Column kServingColumns[] = {
    {"# of req.", "completed"},
    {"Tput (req/s)", "request_throughput"},
    {"Output Tput (tok/s)", "output_throughput"},
    {"Total Tput (tok/s)", "total_token_throughput"},
    {"Mean TTFT (ms)", "mean_ttft_ms"},
    {"Median TTFT (ms)", "median_ttft_ms"},
    {"P99 TTFT (ms)", "p99_ttft_ms"},
    {"Mean TPOT (ms)", "mean_tpot_ms"},
    {"Median TPOT (ms)", "median_tpot_ms"},
    {"P99 TPOT (ms)", "p99_tpot_ms"},
    {"Mean ITL (ms)", "mean_itl_ms"},
    {"Median ITL (ms)", "median_itl_ms"},
    {"P99 ITL (ms)", "p99_itl_ms"},
};

std::vector<std::string> serving_headers() {
  std::vector<std::string> h = {"Test name", "GPU"};
  for (const Column& c : kServingColumns) h.push_back(c.header);
  return h;
}

// vLLM's script turns nvidia-smi's one-line-per-GPU "NAME\nNAME" into "2xNAME".
std::string gpu_label(const RunResult& run) {
  const auto gpu = string_at(run.result, "gpu_type");
  if (!gpu) return kNotAvailable;
  const size_t lines = static_cast<size_t>(std::count(gpu->begin(), gpu->end(), '\n')) + 1;
  return fmt::format("{}x{}", lines, gpu->substr(0, gpu->find('\n')));
}

Cell number_cell(const std::optional<double>& v) {
  if (!v) return {kNotAvailable, false};
  return {text::python_g(*v), true};
}

// A figure's cell; for repeated runs "mean ± half-width of its 95% interval".
Cell figure_cell(const RunResult& run, const char* key) {
  if (const auto s = repeat_figure(run, key)) return {plus_minus(*s), false};  // text, not a number
  return number_cell(figure(run, key));
}

std::vector<const RunResult*> sorted_by_name(std::span<const RunResult> runs) {
  std::vector<const RunResult*> out;
  for (const RunResult& r : runs) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const RunResult* a, const RunResult* b) {
    return a->test_name < b->test_name;
  });
  return out;
}

// Python's json.dumps(obj) separators (", " and ": "), ASCII-only strings, as vLLM writes it.
std::string python_json(const json& j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ", ";
      first = false;
      out += json(key).dump(-1, ' ', true) + ": " + python_json(value);
    }
    return out + "}";
  }
  if (j.is_number_float()) return text::python_repr(j.get<double>());
  return j.dump(-1, ' ', true);
}

// ---- CSV ----

void flatten(const json& j, const std::string& prefix,
             std::vector<std::pair<std::string, json>>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, name, out);
    } else if (!value.is_array()) {
      out.emplace_back(name, value);
    }
  }
}

std::string csv_value(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return text::csv_field(v.get<std::string>());
  if (v.is_number_float()) return text::python_repr(v.get<double>());
  return v.dump();
}

// A pipe table as tabulate prints it (vLLM's script), or with columns aligned for reading.
std::string markdown_table(const std::vector<std::string>& headers,
                           const std::vector<text::Row>& rows, MarkdownStyle style) {
  if (style == MarkdownStyle::kTabulate) return text::tabulate_pipe(headers, rows);
  std::vector<std::vector<std::string>> plain;
  for (const text::Row& r : rows) {
    std::vector<std::string> cells;
    for (const Cell& c : r) cells.push_back(c.text);
    plain.push_back(std::move(cells));
  }
  return text::aligned_markdown(headers, plain);
}

}  // namespace

std::optional<std::string> string_at(const nlohmann::json& j, const std::string& key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<double> per_request(const std::optional<double>& total,
                                  const std::optional<double>& count) {
  if (!total || !count) return std::nullopt;
  return *count > 0 ? *total / *count : 0.0;
}

std::string vllm_serving_markdown(std::span<const RunResult> all_runs, MarkdownStyle style) {
  const std::vector<RunResult> runs = runs_of_kind(all_runs, "serving");
  const std::vector<std::string> headers = serving_headers();
  std::vector<text::Row> rows;
  // vLLM's script sorts by test name; seed 000's hand-made table keeps the order of its runs.
  std::vector<const RunResult*> ordered = sorted_by_name(runs);
  if (style == MarkdownStyle::kAligned) {
    ordered.clear();
    for (const RunResult& r : runs) ordered.push_back(&r);
  }
  for (const RunResult* run : ordered) {
    text::Row row = {{run->test_name, false}, {gpu_label(*run), false}};
    for (const Column& c : kServingColumns) row.push_back(figure_cell(*run, c.key));
    rows.push_back(std::move(row));
  }
  return markdown_table(headers, rows, style);
}

std::vector<RunResult> runs_of_kind(std::span<const RunResult> runs, const std::string& kind) {
  std::vector<RunResult> out;
  for (const RunResult& r : runs) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

namespace {

// A column of one of vLLM's suite tables: its header and the cell of a run.
struct TableColumn {
  std::string header;
  std::function<json(const RunResult&)> cell;  // null when the run lacks the figure
};

json number_json(const std::optional<double>& v, bool integral) {
  if (!v) return nullptr;
  if (integral && is_integral(*v)) return static_cast<int64_t>(*v);
  return *v;
}

json gpu_json(const RunResult& r) {
  const auto gpu = string_at(r.result, "gpu_type");
  return gpu ? json(*gpu) : json(nullptr);
}

// convert-results-json-to-markdown.py: latency_column_mapping. vLLM's latency JSON is in
// seconds; its script multiplies avg_latency and the percentiles by 1000.
std::vector<TableColumn> latency_columns() {
  auto ms = [](const char* key) {
    return [key](const RunResult& r) {
      const auto v = figure(r, key);
      return number_json(v ? std::optional<double>(*v * 1000.0) : std::nullopt, false);
    };
  };
  return {{"Test name", [](const RunResult& r) { return json(r.test_name); }},
          {"GPU", gpu_json},
          {"Mean latency (ms)", ms("avg_latency")},
          {"Median latency (ms)", ms("percentiles.50")},
          {"P99 latency (ms)", ms("percentiles.99")}};
}

// convert-results-json-to-markdown.py: throughput_results_column_mapping.
std::vector<TableColumn> throughput_columns() {
  auto key = [](const char* k, bool integral) {
    return [k, integral](const RunResult& r) { return number_json(figure(r, k), integral); };
  };
  return {{"Test name", [](const RunResult& r) { return json(r.test_name); }},
          {"GPU", gpu_json},
          {"# of req.", key("num_requests", true)},
          {"Total # of tokens", key("total_num_tokens", true)},
          {"Elapsed time (s)", key("elapsed_time", false)},
          {"Tput (req/s)", key("requests_per_second", false)},
          {"Tput (tok/s)", key("tokens_per_second", false)}};
}

std::vector<TableColumn> serving_columns() {
  std::vector<TableColumn> columns = {
      {"Test name", [](const RunResult& r) { return json(r.test_name); }}, {"GPU", gpu_json}};
  for (const Column& c : kServingColumns) {
    const std::string key = c.key;
    columns.push_back({c.header, [key](const RunResult& r) {
                         return number_json(figure(r, key), key == "completed");
                       }});
  }
  return columns;
}

// pandas' DataFrame.to_dict() orientation, {column: {"<row>": value}}, with Python's json.dumps
// separators; nlohmann sorts object keys, so the text is built here to keep the table's order.
// No runs: "{}", as vLLM's empty DataFrame gives.
std::string pandas_table(std::span<const RunResult> runs, const std::vector<TableColumn>& columns) {
  if (runs.empty()) return "{}";
  std::string out = "{";
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) out += ", ";
    out += json(columns[c].header).dump(-1, ' ', true) + ": {";
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i > 0) out += ", ";
      out += "\"" + std::to_string(i) + "\": " + python_json(columns[c].cell(runs[i]));
    }
    out += "}";
  }
  return out + "}";
}

// A markdown table of vLLM's suite (the serving table's rendering rules: GPU as "<n>x<name>",
// numbers in Python's "g" format, tabulate's pipe layout sorted by name, or padded in order).
std::string suite_table_markdown(std::span<const RunResult> runs,
                                 const std::vector<TableColumn>& columns, MarkdownStyle style) {
  std::vector<std::string> headers;
  for (const TableColumn& c : columns) headers.push_back(c.header);
  std::vector<const RunResult*> ordered = sorted_by_name(runs);
  if (style == MarkdownStyle::kAligned) {
    ordered.clear();
    for (const RunResult& r : runs) ordered.push_back(&r);
  }
  std::vector<text::Row> rows;
  for (const RunResult* run : ordered) {
    text::Row row;
    for (const TableColumn& c : columns) {
      if (c.header == "GPU") {
        row.push_back({gpu_label(*run), false});
        continue;
      }
      const json v = c.cell(*run);
      if (v.is_string()) {
        row.push_back({v.get<std::string>(), false});
      } else {
        row.push_back(
            number_cell(v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt));
      }
    }
    rows.push_back(std::move(row));
  }
  return markdown_table(headers, rows, style);
}

}  // namespace

std::string vllm_pandas_json(std::span<const RunResult> runs) {
  // vLLM's results_to_json(latency, throughput, serving), each table its kind's runs as read.
  return "{\"latency\": " + pandas_table(runs_of_kind(runs, "latency"), latency_columns()) +
         ", \"throughput\": " +
         pandas_table(runs_of_kind(runs, "throughput"), throughput_columns()) +
         ", \"serving\": " + pandas_table(runs_of_kind(runs, "serving"), serving_columns()) + "}";
}

std::string vllm_latency_markdown(std::span<const RunResult> runs, MarkdownStyle style) {
  return suite_table_markdown(runs_of_kind(runs, "latency"), latency_columns(), style);
}

std::string vllm_throughput_markdown(std::span<const RunResult> runs, MarkdownStyle style) {
  return suite_table_markdown(runs_of_kind(runs, "throughput"), throughput_columns(), style);
}

std::string vllm_suite_markdown(std::span<const RunResult> runs, MarkdownStyle style) {
  const std::vector<RunResult> latency = runs_of_kind(runs, "latency");
  const std::vector<RunResult> throughput = runs_of_kind(runs, "throughput");
  const std::vector<RunResult> serving = runs_of_kind(runs, "serving");
  const std::string search = search_markdown(runs);
  if (latency.empty() && throughput.empty()) {
    return vllm_serving_markdown(runs, style) + (search.empty() ? "" : "\n" + search);
  }
  // The section titles of vLLM's performance-benchmarks-descriptions.md.
  std::string out;
  auto section = [&](const char* title, const std::string& table) {
    if (!out.empty()) out += "\n";
    out += std::string("## ") + title + "\n\n" + table;
  };
  if (!latency.empty()) section("Latency tests", vllm_latency_markdown(latency, style));
  if (!throughput.empty()) section("Throughput tests", vllm_throughput_markdown(throughput, style));
  if (!serving.empty()) section("Serving tests", vllm_serving_markdown(serving, style));
  if (!search.empty()) out += "\n" + search;
  return out;
}

std::string concurrency_markdown(std::span<const RunResult> all_runs) {
  const std::vector<RunResult> runs = runs_of_kind(all_runs, "serving");
  static const std::vector<std::string> kHeaders = {"Concurrency",
                                                    "Request Throughput (req/s)",
                                                    "Output Token Throughput (tok/s)",
                                                    "Mean E2E Latency (ms)",
                                                    "P99 E2E Latency (ms)",
                                                    "Mean TTFT (ms)",
                                                    "P99 TTFT (ms)",
                                                    "Mean TPOT (ms)",
                                                    "P99 TPOT (ms)"};
  static const char* const kKeys[] = {"request_throughput", "output_throughput", "mean_e2el_ms",
                                      "p99_e2el_ms",        "mean_ttft_ms",      "p99_ttft_ms",
                                      "mean_tpot_ms",       "p99_tpot_ms"};
  // One table per label (seed 004 has one per deployment and ISL:OSL), in order of appearance.
  std::vector<std::string> labels;
  for (const RunResult& r : runs) {
    const std::string label = string_at(r.result, "label").value_or("");
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
  }
  std::string out;
  for (const std::string& label : labels) {
    std::vector<const RunResult*> group;
    for (const RunResult& r : runs) {
      if (string_at(r.result, "label").value_or("") == label) group.push_back(&r);
    }
    // By concurrency, unlimited last.
    std::stable_sort(group.begin(), group.end(), [](const RunResult* a, const RunResult* b) {
      return figure(*a, "max_concurrency").value_or(INFINITY) <
             figure(*b, "max_concurrency").value_or(INFINITY);
    });
    if (!out.empty()) out += "\n";
    out += label.empty() ? "## Benchmark Result\n\n" : "## Benchmark Result (" + label + ")\n\n";
    out += "|";
    for (const std::string& h : kHeaders) out += " " + h + " |";
    out += "\n|";
    for (const std::string& h : kHeaders) out += ":" + std::string(h.size(), '-') + ":|";
    out += "\n";
    for (const RunResult* r : group) {
      const auto concurrency = figure(*r, "max_concurrency");
      out += "| " + (concurrency ? text::round2(*concurrency) : std::string("unlimited"));
      for (const char* key : kKeys) {
        const auto v = figure(*r, key);
        const auto s = repeat_figure(*r, key);  // repeated runs: mean ± its 95% interval
        out += " | " + (s   ? text::round2(s->mean) + " ± " + text::round2(s->ci_high - s->mean)
                        : v ? text::round2(*v)
                            : std::string(kNotAvailable));
      }
      out += " |\n";
    }
  }
  return out;
}

std::string inference_perf_stages_markdown(std::span<const RunResult> all_runs) {
  const std::vector<RunResult> runs = runs_of_kind(all_runs, "serving");
  std::vector<std::vector<std::string>> rows;
  for (const RunResult& run : runs) {
    const auto rate = figure(run, "request_rate");
    const auto completed = figure(run, "completed");
    const auto failed = figure(run, "failed");
    auto repr = [](const std::optional<double>& v) {
      return v ? text::python_repr(*v) : std::string(kNotAvailable);
    };
    std::string qps = kNotAvailable;
    if (rate)
      qps = is_integral(*rate) ? fmt::format("{}", static_cast<int64_t>(*rate)) : repr(rate);
    std::string total = kNotAvailable;
    if (completed && failed) total = fmt::format("{}", static_cast<int64_t>(*completed + *failed));
    const auto mean_e2el_ms = figure(run, "mean_e2el_ms");
    rows.push_back(
        {qps, total, repr(per_request(figure(run, "total_input_tokens"), completed)),
         repr(per_request(figure(run, "total_output_tokens"), completed)),
         repr(mean_e2el_ms ? std::optional<double>(*mean_e2el_ms / 1000.0) : std::nullopt)});
  }
  const std::string repeats = repeats_markdown(runs);
  return text::aligned_markdown({"qps", "total_requests", "avg_prompt_tokens", "avg_output_tokens",
                                 "avg_time_per_request"},
                                rows) +
         (repeats.empty() ? "" : "\n" + repeats);
}

std::string figures_csv(std::span<const RunResult> runs) {
  std::vector<std::string> columns;
  std::set<std::string> seen;
  std::vector<std::vector<std::pair<std::string, json>>> flat(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].result, "", flat[i]);
    for (const auto& [name, value] : flat[i]) {
      // The result's own test_name is the first column already (RunResult::test_name).
      if (name == "test_name") continue;
      if (seen.insert(name).second) columns.push_back(name);
    }
  }
  std::string out = "test_name,source,format";
  for (const std::string& c : columns) out += "," + text::csv_field(c);
  out += "\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    out += text::csv_field(runs[i].test_name) + "," + text::csv_field(runs[i].source) + "," +
           runs[i].format;
    std::map<std::string, const json*> by_name;
    for (const auto& [name, value] : flat[i]) by_name[name] = &value;
    for (const std::string& c : columns) {
      const auto it = by_name.find(c);
      out += "," + (it == by_name.end() ? std::string() : csv_value(*it->second));
    }
    out += "\n";
  }
  return out;
}

}  // namespace servebench::report
