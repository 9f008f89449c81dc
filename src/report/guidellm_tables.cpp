// File: report/guidellm_tables.cpp
// GuideLLM's Info and Stats tables of one sweep (seed 003), with GuideLLM's own definitions
// where they differ from vLLM's (docs/reports.md).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "metrics/metrics.h"
#include "report/guidellm_layout.h"
#include "report/text_tables.h"

namespace servebench::report {

std::string benchmark_name(const RunResult& run) {
  // An imported GuideLLM benchmark carries GuideLLM's own name for its strategy.
  if (const auto name = string_at(run.result, "guidellm_strategy")) return *name;
  // A servebench run of a GuideLLM profile (run --profile) names its benchmark itself.
  if (const auto load = run.result.find("servebench");
      load != run.result.end() && load->is_object() && load->contains("load")) {
    if (const auto name = string_at((*load)["load"], "benchmark")) return *name;
  }
  return "";
}

namespace {

using nlohmann::json;
using text::Cell;

// ---- GuideLLM (seed 003) ----

// GuideLLM's strategy_display_str for the load a vLLM-style run used.
std::string guidellm_strategy(const RunResult& run) {
  if (std::string name = benchmark_name(run); !name.empty()) return name;
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

}  // namespace

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

}  // namespace servebench::report
