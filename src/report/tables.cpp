// The seed layouts filled from results. Which tool's definitions each column follows, and what
// is "n/a" when, is written down in docs/reports.md.
#include "report/tables.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "metrics/metrics.h"
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

// vLLM stamps "date" when the run has finished, servebench when it starts.
std::pair<std::string, std::string> start_end(const RunResult& run) {
  const auto day = seconds_of_day(string_at(run.result, "date").value_or(""));
  const auto duration = figure(run, "duration");
  if (!day || !duration) return {kNotAvailable, kNotAvailable};
  const auto d = static_cast<int64_t>(std::llround(*duration));
  if (run.format == "servebench") return {clock_text(*day), clock_text(*day + d)};
  return {clock_text(*day - d), clock_text(*day)};
}

// servebench's failures stopped before they finished (Ctrl-C, drain timeout) are what GuideLLM
// calls incomplete; vLLM results cannot tell them apart.
std::optional<double> incomplete_requests(const RunResult& run) {
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

}  // namespace

std::string vllm_serving_markdown(std::span<const RunResult> runs, MarkdownStyle style) {
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
  if (style == MarkdownStyle::kTabulate) return text::tabulate_pipe(headers, rows);
  std::vector<std::vector<std::string>> plain;
  for (const text::Row& r : rows) {
    std::vector<std::string> cells;
    for (const Cell& c : r) cells.push_back(c.text);
    plain.push_back(std::move(cells));
  }
  return text::aligned_markdown(headers, plain);
}

std::string vllm_pandas_json(std::span<const RunResult> runs) {
  // pandas' DataFrame.to_dict() orientation: {column: {row index: value}}, rows as read.
  json serving = json::object();
  if (!runs.empty()) {
    json names = json::object(), gpus = json::object();
    for (size_t i = 0; i < runs.size(); ++i) {
      names[std::to_string(i)] = runs[i].test_name;
      const auto gpu = string_at(runs[i].result, "gpu_type");
      gpus[std::to_string(i)] = gpu ? json(*gpu) : json(nullptr);
    }
    serving["Test name"] = std::move(names);
    serving["GPU"] = std::move(gpus);
    for (const Column& c : kServingColumns) {
      json column = json::object();
      for (size_t i = 0; i < runs.size(); ++i) {
        const auto v = figure(runs[i], c.key);
        json cell = nullptr;
        if (v)
          cell = std::string(c.key) == "completed" && is_integral(*v)
                     ? json(static_cast<int64_t>(*v))
                     : json(*v);
        column[std::to_string(i)] = std::move(cell);
      }
      serving[c.header] = std::move(column);
    }
  }
  // nlohmann sorts object keys; the column order must stay the table's, so build the text here.
  std::string out = "{\"latency\": {}, \"throughput\": {}, \"serving\": {";
  bool first = true;
  auto add_column = [&](const std::string& header) {
    if (!serving.contains(header)) return;
    if (!first) out += ", ";
    first = false;
    std::string column = "{";
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i > 0) column += ", ";
      const std::string index = std::to_string(i);
      column += "\"" + index + "\": " + python_json(serving[header][index]);
    }
    out += json(header).dump(-1, ' ', true) + ": " + column + "}";
  };
  for (const std::string& h : serving_headers()) add_column(h);
  return out + "}}";
}

std::string concurrency_markdown(std::span<const RunResult> runs) {
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

std::string guidellm_tables(std::span<const RunResult> runs) {
  std::vector<std::vector<std::string>> info_rows, stats_rows;
  for (const RunResult& run : runs) {
    const auto completed = figure(run, "completed");
    const auto failed = figure(run, "failed");
    const auto incomplete = incomplete_requests(run);
    std::optional<double> errored = failed;
    if (failed && incomplete) errored = *failed - *incomplete;
    const auto input = figure(run, "total_input_tokens");
    const auto output = figure(run, "total_output_tokens");
    const auto [start, end] = start_end(run);
    info_rows.push_back({guidellm_strategy(run), start, end, fixed(figure(run, "duration"), 1),
                         fixed(completed, 0), fixed(incomplete, 0), fixed(errored, 0),
                         fixed(per_request(input, completed), 1), kNotAvailable, kNotAvailable,
                         fixed(per_request(output, completed), 1), kNotAvailable, kNotAvailable,
                         fixed(input, 0), kNotAvailable, kNotAvailable, fixed(output, 0),
                         kNotAvailable, kNotAvailable});
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

std::string inference_perf_stages_markdown(std::span<const RunResult> runs) {
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
