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

constexpr const char* kNotAvailable = "n/a";

std::optional<std::string> string_at(const json& j, const std::string& key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

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

// ---- GuideLLM (seed 003) ----

// GuideLLM's strategy_display_str for the load a vLLM-style run used.
std::string guidellm_strategy(const RunResult& run) {
  // An imported GuideLLM benchmark carries GuideLLM's own name for its strategy.
  if (const auto name = string_at(run.result, "guidellm_strategy")) return *name;
  // A servebench run of a GuideLLM profile (run --profile) names its benchmark itself.
  if (const auto load = run.result.find("servebench");
      load != run.result.end() && load->is_object() && load->contains("load")) {
    if (const auto name = string_at((*load)["load"], "benchmark")) return *name;
  }
  // vLLM's ramp-up writes request_rate "inf": its rates are the ramp's (ASCII, so that the
  // byte-counted columns stay aligned).
  if (const auto strategy = string_at(run.result, "ramp_up_strategy")) {
    const auto start = figure(run, "ramp_up_start_rps"), end = figure(run, "ramp_up_end_rps");
    if (start && end) {
      return fmt::format("ramp-up {} {}->{}", *strategy, static_cast<int64_t>(*start),
                         static_cast<int64_t>(*end));
    }
  }
  const double rate = figure(run, "request_rate").value_or(INFINITY);
  const auto concurrency = figure(run, "max_concurrency");
  if (std::isinf(rate)) {
    if (!concurrency) return "throughput";
    if (*concurrency == 1) return "synchronous";
    return fmt::format("concurrent@{}", static_cast<int64_t>(*concurrency));
  }
  const double burstiness = figure(run, "burstiness").value_or(1.0);
  const char* kind = burstiness == 1.0 ? "poisson" : std::isinf(burstiness) ? "constant" : "gamma";
  return fmt::format("{}@{:.2f}", kind, rate);
}

// "%Y%m%d-%H%M%S" to seconds since midnight; nullopt for any other text.
std::optional<int64_t> seconds_of_day(const std::string& date) {
  if (date.size() != 15 || date[8] != '-') return std::nullopt;
  for (size_t i = 9; i < 15; ++i) {
    if (date[i] < '0' || date[i] > '9') return std::nullopt;
  }
  auto two = [&](size_t i) { return (date[i] - '0') * 10 + (date[i + 1] - '0'); };
  return two(9) * 3600 + two(11) * 60 + two(13);
}

std::string clock_text(int64_t seconds) {
  seconds = ((seconds % 86400) + 86400) % 86400;
  return fmt::format("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

// vLLM stamps "date" when the run has finished, servebench (and an import of GuideLLM's
// start_time) when it starts.
std::pair<std::string, std::string> start_end(const RunResult& run) {
  const auto day = seconds_of_day(string_at(run.result, "date").value_or(""));
  const auto duration = figure(run, "duration");
  if (!day || !duration) return {kNotAvailable, kNotAvailable};
  const auto d = static_cast<int64_t>(std::llround(*duration));
  if (run.format != "vllm") return {clock_text(*day), clock_text(*day + d)};
  return {clock_text(*day - d), clock_text(*day)};
}

// servebench's failures stopped before they finished (Ctrl-C, drain timeout) are what GuideLLM
// calls incomplete; vLLM results cannot tell them apart.
std::optional<double> incomplete_requests(const RunResult& run) {
  if (const auto n = figure(run, "incomplete_requests")) return n;  // GuideLLM's own count
  if (run.format != "servebench") return std::nullopt;
  const json& reasons = run.result["servebench"].value("failures_by_reason", json::object());
  double n = 0;
  for (const char* reason : {"cancelled", "not_sent"}) {
    if (reasons.contains(reason) && reasons[reason].is_number()) n += reasons[reason].get<double>();
  }
  return n;
}

std::string fixed(const std::optional<double>& v, int decimals) {
  if (!v) return kNotAvailable;
  return fmt::format("{:.{}f}", *v, decimals);
}

std::optional<double> per_request(const std::optional<double>& total,
                                  const std::optional<double>& count) {
  if (!total || !count) return std::nullopt;
  return *count > 0 ? *total / *count : 0.0;
}

struct Detail {
  std::vector<double> latency_s, ttft_s;
  std::vector<double> output_tokens;
};

// The successful requests' per-request values, when the result was saved with --save-detailed.
std::optional<Detail> successful_detail(const RunResult& run) {
  const json& j = run.result;
  for (const char* key : {"latencies", "ttfts", "output_lens"}) {
    if (!j.contains(key) || !j[key].is_array()) return std::nullopt;
  }
  const json& lat = j["latencies"];
  const json& ttft = j["ttfts"];
  const json& out = j["output_lens"];
  const json errors = j.value("errors", json::array());
  // Without a list of errors the failures cannot be told apart.
  if (!errors.is_array()) return std::nullopt;
  if (ttft.size() != lat.size() || out.size() != lat.size()) return std::nullopt;
  Detail d;
  for (size_t i = 0; i < lat.size(); ++i) {
    if (!lat[i].is_number() || !ttft[i].is_number() || !out[i].is_number()) return std::nullopt;
    const bool failed = i < errors.size() && errors[i].is_string() &&
                        !errors[i].get_ref<const std::string&>().empty();
    if (failed || lat[i].get<double>() <= 0) continue;
    d.latency_s.push_back(lat[i].get<double>());
    d.ttft_s.push_back(ttft[i].get<double>());
    d.output_tokens.push_back(out[i].get<double>());
  }
  return d;
}

// Time-averaged number of successful requests in flight over the run (Little's law): the sum of
// their latencies over the duration. GuideLLM's request concurrency is that time average.
std::optional<double> mean_concurrency(const RunResult& run) {
  if (const auto c = figure(run, "mean_concurrency")) return c;  // GuideLLM's own
  const auto duration = figure(run, "duration");
  const json& j = run.result;
  if (!duration || *duration <= 0 || !j.contains("latencies") || !j["latencies"].is_array()) {
    return std::nullopt;
  }
  double busy_s = 0;
  for (const json& v : j["latencies"]) {
    if (v.is_number() && v.get<double>() > 0) busy_s += v.get<double>();
  }
  return busy_s / *duration;
}

// GuideLLM v0.3's time_per_output_token_ms: (last token − first token) / output tokens, 0 for no
// tokens, per successful request.
std::optional<metrics::Distribution> guidellm_tpot_ms(const RunResult& run) {
  // An imported GuideLLM benchmark carries GuideLLM's own TPOT (token-weighted statistics).
  if (const auto mean = figure(run, "guidellm_tpot.mean_ms")) {
    metrics::Distribution d;
    d.mean = *mean;
    d.median = figure(run, "guidellm_tpot.median_ms").value_or(NAN);
    d.percentiles = {{99.0, figure(run, "guidellm_tpot.p99_ms").value_or(NAN)}};
    return d;
  }
  const auto d = successful_detail(run);
  if (!d) return std::nullopt;
  std::vector<double> samples;
  for (size_t i = 0; i < d->latency_s.size(); ++i) {
    const double n = d->output_tokens[i];
    samples.push_back(n > 0 ? 1000.0 * (d->latency_s[i] - d->ttft_s[i]) / n : 0.0);
  }
  return metrics::summarize(std::move(samples), {99});
}

std::string scaled(const RunResult& run, const std::string& key, double scale, int decimals) {
  const auto v = figure(run, key);
  return fixed(v ? std::optional<double>(*v * scale) : std::nullopt, decimals);
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
    for (const Column& c : kServingColumns) row.push_back(number_cell(figure(*run, c.key)));
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
        out += " | " + (v ? text::round2(*v) : std::string(kNotAvailable));
      }
      out += " |\n";
    }
  }
  return out;
}

// A run's place in its `run --profile` sequence (servebench.load.sequence), else nullopt.
std::optional<double> profile_sequence(const RunResult& run) {
  const json* j = &run.result;
  for (const char* key : {"servebench", "load", "sequence"}) {
    if (!j->is_object() || !j->contains(key)) return std::nullopt;
    j = &(*j)[key];
  }
  return j->is_number() ? std::optional<double>(j->get<double>()) : std::nullopt;
}

std::string guidellm_info_stats(std::span<const RunResult> all_runs) {
  std::vector<RunResult> runs = runs_of_kind(all_runs, "serving");
  // The benchmarks of one `run --profile` in the order they ran, as GuideLLM lists them
  // (synchronous, throughput, constant@…), not in the order of their file names.
  if (std::all_of(runs.begin(), runs.end(),
                  [](const RunResult& r) { return profile_sequence(r).has_value(); })) {
    std::stable_sort(runs.begin(), runs.end(), [](const RunResult& a, const RunResult& b) {
      const auto da = string_at(a.result, "date"), db = string_at(b.result, "date");
      if (da != db) return da < db;
      return *profile_sequence(a) < *profile_sequence(b);
    });
  }
  std::vector<std::vector<std::string>> info_rows, stats_rows;
  for (const RunResult& run : runs) {
    const auto completed = figure(run, "completed");
    const auto failed = figure(run, "failed");
    const auto incomplete = incomplete_requests(run);
    std::optional<double> errored = figure(run, "errored_requests");
    if (!errored) errored = failed;
    if (!figure(run, "errored_requests") && failed && incomplete) errored = *failed - *incomplete;
    const auto input = figure(run, "total_input_tokens");
    const auto output = figure(run, "total_output_tokens");
    // Tokens of incomplete and errored requests: GuideLLM's reports and servebench's results
    // keep them; vLLM's do not.
    auto either = [&run](const char* guidellm_key, const char* servebench_key) {
      const auto v = figure(run, guidellm_key);
      return v ? v : figure(run, servebench_key);
    };
    const auto inc_input =
        either("incomplete_total_input_tokens", "servebench.incomplete.total_input_tokens");
    const auto inc_output =
        either("incomplete_total_output_tokens", "servebench.incomplete.total_output_tokens");
    const auto err_input =
        either("errored_total_input_tokens", "servebench.errored.total_input_tokens");
    const auto err_output =
        either("errored_total_output_tokens", "servebench.errored.total_output_tokens");
    const auto [start, end] = start_end(run);
    info_rows.push_back(
        {guidellm_strategy(run), start, end, fixed(figure(run, "duration"), 1), fixed(completed, 0),
         fixed(incomplete, 0), fixed(errored, 0), fixed(per_request(input, completed), 1),
         fixed(per_request(inc_input, incomplete), 1), fixed(per_request(err_input, errored), 1),
         fixed(per_request(output, completed), 1), fixed(per_request(inc_output, incomplete), 1),
         fixed(per_request(err_output, errored), 1), fixed(input, 0), fixed(inc_input, 0),
         fixed(err_input, 0), fixed(output, 0), fixed(inc_output, 0), fixed(err_output, 0)});
    const auto tpot = guidellm_tpot_ms(run);
    auto tpot_cell = [&](auto field) {
      return tpot ? fmt::format("{:.1f}", field(*tpot)) : std::string(kNotAvailable);
    };
    stats_rows.push_back(
        {guidellm_strategy(run), fixed(figure(run, "request_throughput"), 2),
         fixed(mean_concurrency(run), 2), fixed(figure(run, "output_throughput"), 1),
         fixed(figure(run, "total_token_throughput"), 1), scaled(run, "mean_e2el_ms", 1e-3, 2),
         scaled(run, "median_e2el_ms", 1e-3, 2), scaled(run, "p99_e2el_ms", 1e-3, 2),
         scaled(run, "mean_ttft_ms", 1, 1), scaled(run, "median_ttft_ms", 1, 1),
         scaled(run, "p99_ttft_ms", 1, 1),
         // GuideLLM's ITL, (last − first) / (tokens − 1) per request, is vLLM's TPOT.
         scaled(run, "mean_tpot_ms", 1, 1), scaled(run, "median_tpot_ms", 1, 1),
         scaled(run, "p99_tpot_ms", 1, 1),
         tpot_cell([](const metrics::Distribution& d) { return d.mean; }),
         tpot_cell([](const metrics::Distribution& d) { return d.median; }),
         tpot_cell([](const metrics::Distribution& d) { return d.percentiles.front().second; })});
  }
  const std::vector<std::string> info_headers = {
      "Benchmark", "Start Time", "End Time", "Duration (s)", "Comp", "Inc", "Err",
      "Comp",      "Inc",        "Err",      "Comp",         "Inc",  "Err", "Comp",
      "Inc",       "Err",        "Comp",     "Inc",          "Err"};
  const std::vector<std::string> stats_headers = {
      "Benchmark", "Per Second", "Concurrency", "mean",   "mean", "mean", "median", "p99", "mean",
      "median",    "p99",        "mean",        "median", "p99",  "mean", "median", "p99"};
  std::string out = "Benchmarks Info:\n";
  out += text::guidellm_console_table({{"Metadata", 3},
                                       {"Requests Made", 6},
                                       {"Prompt Tok/Req", 9},
                                       {"Output Tok/Req", 12},
                                       {"Prompt Tok Total", 15},
                                       {"Output Tok Total", 18}},
                                      info_headers, info_rows);
  out += "\nBenchmarks Stats:\n";
  // GuideLLM v0.3 heads the request-latency group "(ms)" over values in seconds; here the unit
  // printed is the unit of the values.
  out += text::guidellm_console_table({{"Metadata", 0},
                                       {"Request Stats", 2},
                                       {"Out Tok/sec", 3},
                                       {"Tot Tok/sec", 4},
                                       {"Req Latency (s)", 7},
                                       {"TTFT (ms)", 10},
                                       {"ITL (ms)", 13},
                                       {"TPOT (ms)", 16}},
                                      stats_headers, stats_rows);
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
  return text::aligned_markdown(
      {"qps", "total_requests", "avg_prompt_tokens", "avg_output_tokens", "avg_time_per_request"},
      rows);
}

std::string figures_csv(std::span<const RunResult> runs) {
  std::vector<std::string> columns;
  std::set<std::string> seen;
  std::vector<std::vector<std::pair<std::string, json>>> flat(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    flatten(runs[i].result, "", flat[i]);
    for (const auto& [name, value] : flat[i]) {
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
