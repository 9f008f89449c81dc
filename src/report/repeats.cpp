// Repeated runs (`run --num-runs`) read back from a result's "servebench.repeats": the console
// block after the runs, and each figure's interval for the tables and `compare`.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/report.h"
#include "report/tables.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;

const json* repeats_of(const json& result) {
  const auto sb = result.find("servebench");
  if (sb == result.end() || !sb->is_object()) return nullptr;
  const auto rep = sb->find("repeats");
  if (rep == sb->end() || !rep->is_object() || rep->empty()) return nullptr;
  return &*rep;
}

std::optional<metrics::RepeatStats> stats_from(const json& j) {
  if (!j.is_object()) return std::nullopt;
  for (const char* k : {"mean", "sd", "ci95_low", "ci95_high", "n"}) {
    const auto it = j.find(k);
    if (it == j.end() || !it->is_number()) return std::nullopt;
  }
  metrics::RepeatStats s;
  s.mean = j["mean"].get<double>();
  s.sd = j["sd"].get<double>();
  s.ci_low = j["ci95_low"].get<double>();
  s.ci_high = j["ci95_high"].get<double>();
  s.n = j["n"].get<size_t>();
  return s;
}

// vLLM's console label of a result key ("mean_ttft_ms" → "Mean TTFT (ms):").
std::string label(const std::string& key) {
  static const std::vector<std::pair<std::string, std::string>> kFixed = {
      {"completed", "Successful requests:"},
      {"failed", "Failed requests:"},
      {"duration", "Benchmark duration (s):"},
      {"total_input_tokens", "Total input tokens:"},
      {"total_output_tokens", "Total generated tokens:"},
      {"request_throughput", "Request throughput (req/s):"},
      {"request_goodput", "Request goodput (req/s):"},
      {"output_throughput", "Output token throughput (tok/s):"},
      {"max_output_tokens_per_s", "Peak output token throughput (tok/s):"},
      {"max_concurrent_requests", "Peak concurrent requests:"},
      {"total_token_throughput", "Total token throughput (tok/s):"}};
  for (const auto& [k, l] : kFixed) {
    if (k == key) return l;
  }
  static const std::regex kMetric("(mean|median|std|p[0-9.]+)_(.+)_ms");
  std::smatch m;
  if (!std::regex_match(key, m, kMetric)) return key + ":";
  std::string stat = m[1].str(), name = m[2].str();
  stat[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(stat[0])));
  const bool short_name = name == "ttft" || name == "tpot" || name == "itl" || name == "e2el";
  if (short_name) {
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return fmt::format("{} {} (ms):", stat, name);
}

// The keys in vLLM's console order: the counts and throughputs, then each metric's figures.
std::vector<std::string> console_order(const json& repeats) {
  static const char* const kHead[] = {"completed",
                                      "failed",
                                      "duration",
                                      "total_input_tokens",
                                      "total_output_tokens",
                                      "request_throughput",
                                      "request_goodput",
                                      "output_throughput",
                                      "max_output_tokens_per_s",
                                      "max_concurrent_requests",
                                      "total_token_throughput"};
  std::vector<std::string> keys;
  for (const char* k : kHead) {
    if (repeats.contains(k)) keys.emplace_back(k);
  }
  for (const char* metric : {"_ttft_ms", "_tpot_ms", "_itl_ms", "_e2el_ms"}) {
    for (const char* stat : {"mean", "median", "std"}) {
      const std::string k = std::string(stat) + metric;
      if (repeats.contains(k)) keys.push_back(k);
    }
    for (const auto& [k, v] : repeats.items()) {
      if (k.starts_with("p") && k.ends_with(metric)) keys.push_back(k);
    }
  }
  return keys;
}

}  // namespace

std::optional<metrics::RepeatStats> repeat_figure(const RunResult& run, const std::string& key) {
  const json* rep = repeats_of(run.result);
  if (!rep) return std::nullopt;
  const auto it = rep->find(key);
  if (it == rep->end()) return std::nullopt;
  return stats_from(*it);
}

std::string plus_minus(const metrics::RepeatStats& s) {
  const double half = s.ci_high - s.mean;  // three significant digits, never an exponent
  return text::python_g(s.mean) + " ± " +
         (std::fabs(half) >= 1000 ? fmt::format("{:.0f}", half) : fmt::format("{:.3g}", half));
}

std::string repeats_markdown(std::span<const RunResult> runs) {
  static const std::pair<const char*, const char*> kColumns[] = {
      {"Tput (req/s)", "request_throughput"}, {"Output Tput (tok/s)", "output_throughput"},
      {"Mean TTFT (ms)", "mean_ttft_ms"},     {"P99 TTFT (ms)", "p99_ttft_ms"},
      {"Mean TPOT (ms)", "mean_tpot_ms"},     {"P99 TPOT (ms)", "p99_tpot_ms"},
      {"Mean ITL (ms)", "mean_itl_ms"},       {"P99 ITL (ms)", "p99_itl_ms"},
      {"Mean E2EL (ms)", "mean_e2el_ms"},     {"P99 E2EL (ms)", "p99_e2el_ms"}};
  std::vector<std::string> headers = {"Test name", "Runs"};
  for (const auto& [header, key] : kColumns) headers.emplace_back(header);
  std::vector<std::vector<std::string>> rows;
  for (const RunResult& run : runs) {
    const json* rep = repeats_of(run.result);
    if (!rep) continue;
    size_t n = 0;
    for (const auto& [key, value] : rep->items()) {
      if (const auto s = stats_from(value)) n = std::max(n, s->n);
    }
    std::vector<std::string> row = {run.test_name, std::to_string(n)};
    for (const auto& [header, key] : kColumns) {
      const auto s = repeat_figure(run, key);
      row.push_back(s ? plus_minus(*s) : std::string("n/a"));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return "";
  return "## Repeated runs (mean ± 95% confidence half-width, Student's t)\n\n" +
         text::aligned_markdown(headers, rows);
}

std::string repeats_console_block(const json& result) {
  const json* rep = repeats_of(result);
  if (!rep) return "";
  std::string out;
  const std::vector<std::string> keys = console_order(*rep);
  size_t n = 0;
  for (const std::string& k : keys) {
    if (const auto s = stats_from((*rep)[k])) n = std::max(n, s->n);
  }
  out += fmt::format("{:=^50}\n", fmt::format(" Repeated Runs ({} runs) ", n));
  out += fmt::format("{:<40} {}\n", "Figure:", "mean ± 95% CI half-width (sd, runs)");
  for (const std::string& k : keys) {
    const auto s = stats_from((*rep)[k]);
    if (!s) continue;
    out += fmt::format("{:<40} {:.2f} ± {:.2f} (sd {:.2f}, {} runs)\n", label(k), s->mean,
                       s->ci_high - s->mean, s->sd, s->n);
  }
  out += std::string(50, '=') + "\n";
  return out;
}

}  // namespace servebench::report
