// GuideLLM's benchmarks report (`guidellm benchmark --output-path benchmarks.json`) mapped onto
// vLLM's result keys. The schema is GuideLLM v0.3's GenerativeBenchmarksReport
// (src/guidellm/benchmark/benchmark.py: GenerativeBenchmark, GenerativeMetrics; statistics in
// src/guidellm/objects/statistics.py: StatusDistributionSummary → DistributionSummary with
// mean, median, std_dev, count, total_sum and percentiles p001 … p999), the version whose
// console tables seed 003 shows. Only the "successful" status of each distribution is read, as
// GuideLLM's own tables do. Later versions moved the strategy to "config" and the totals into
// "metrics"; both places are looked at. What each key means, and where GuideLLM's definition
// differs from vLLM's, is in docs/reports.md ("Reading results").
#include <cmath>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "report/import_formats.h"

namespace servebench::report::importers {
namespace {

using nlohmann::json;

struct Reader {
  std::string path;
  std::string where;  // "benchmarks[2]"
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw core::Error(core::ErrorKind::kInput, path,
                      (key.empty() ? where : where + "." + key) + ": " + message);
  }
  // A number at `key` of `j`, or nullopt when absent or null; anything else is an error.
  std::optional<double> number(const json& j, const std::string& key, const std::string& at) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) fail(at + key, "not a number");
    return it->get<double>();
  }
};

// GuideLLM's strategy_display_str (benchmark/output.py): "synchronous", "throughput",
// "concurrent@N", "constant@R" and "poisson@R" with R to 2 decimals.
std::string strategy_display(const json& strategy, double rate, double streams) {
  const std::string type = strategy.value("type_", std::string("unknown"));
  if (type == "concurrent") return fmt::format("concurrent@{}", static_cast<int64_t>(streams));
  if (type == "constant" || type == "poisson") return fmt::format("{}@{:.2f}", type, rate);
  return type;
}

json one_benchmark(const json& b, const Reader& r, const std::string& stem) {
  if (!b.is_object()) r.fail("", "not an object");
  const json* metrics = object_at(b, {"metrics"});
  if (!metrics) r.fail("metrics", "missing: not a GuideLLM generative benchmark");
  const json* strategy = object_at(b, {"args", "strategy"});
  if (!strategy) strategy = object_at(b, {"config", "strategy"});
  if (!strategy) r.fail("args.strategy", "missing (GuideLLM v0.3 keeps it there, later in config)");
  const json* totals = object_at(b, {"request_totals"});
  if (!totals) totals = object_at(*metrics, {"request_totals"});
  if (!totals) r.fail("request_totals", "missing");
  if (strategy->contains("type_") && !(*strategy)["type_"].is_string()) {
    r.fail("args.strategy.type_", "not a string");
  }

  json out = json::object();
  const auto successful = r.number(*totals, "successful", "request_totals.");
  const auto incomplete = r.number(*totals, "incomplete", "request_totals.");
  const auto errored = r.number(*totals, "errored", "request_totals.");
  if (!successful) r.fail("request_totals.successful", "missing");
  out["completed"] = static_cast<int64_t>(*successful);
  out["failed"] = static_cast<int64_t>(incomplete.value_or(0) + errored.value_or(0));
  put(out, "incomplete_requests", incomplete);
  put(out, "errored_requests", errored);

  const auto start = r.number(b, "start_time", "");
  const auto end = r.number(b, "end_time", "");
  std::optional<double> duration = r.number(b, "duration", "");
  if (!duration && start && end) duration = *end - *start;
  put(out, "duration", duration);
  if (start) out["date"] = utc_compact_date(*start);

  const std::string type = strategy->value("type_", std::string());
  const double rate = r.number(*strategy, "rate", "args.strategy.").value_or(INFINITY);
  const double streams = r.number(*strategy, "streams", "args.strategy.").value_or(0);
  out["guidellm_strategy"] = strategy_display(*strategy, rate, streams);
  if (type == "constant" || type == "poisson") {
    out["request_rate"] = rate;
    out["burstiness"] = type == "constant" ? json("inf") : json(1.0);
  } else {
    out["request_rate"] = "inf";
  }
  if (type == "synchronous") out["max_concurrency"] = 1;
  if (type == "concurrent") out["max_concurrency"] = static_cast<int64_t>(streams);
  if (type != "synchronous" && type != "concurrent") out["max_concurrency"] = nullptr;

  // metrics.<name>.<status> is a DistributionSummary.
  auto summary = [&](const char* name, const char* status) -> const json* {
    return object_at(*metrics, {name, status});
  };
  auto stat = [&](const char* name, const char* status,
                  const char* field) -> std::optional<double> {
    const json* s = summary(name, status);
    if (!s) return std::nullopt;
    return r.number(*s, field, std::string("metrics.") + name + "." + status + ".");
  };
  auto percentile = [&](const char* name, const char* p) -> std::optional<double> {
    const json* s = summary(name, "successful");
    if (!s || !s->contains("percentiles") || !(*s)["percentiles"].is_object()) return std::nullopt;
    return r.number((*s)["percentiles"], p, std::string("metrics.") + name + ".successful.");
  };
  auto scaled = [](std::optional<double> v, double k) {
    return v ? std::optional<double>(*v * k) : std::nullopt;
  };
  // A distribution under vLLM's aggregate keys: mean_/median_/std_/p90_/p95_/p99_<suffix>.
  auto distribution = [&](json& into, const char* name, const std::string& suffix, double k) {
    put(into, "mean_" + suffix, scaled(stat(name, "successful", "mean"), k));
    put(into, "median_" + suffix, scaled(stat(name, "successful", "median"), k));
    put(into, "std_" + suffix, scaled(stat(name, "successful", "std_dev"), k));
    for (const char* p : {"p90", "p95", "p99"}) {
      put(into, std::string(p) + "_" + suffix, scaled(percentile(name, p), k));
    }
  };

  put(out, "total_input_tokens", stat("prompt_token_count", "successful", "total_sum"));
  put(out, "total_output_tokens", stat("output_token_count", "successful", "total_sum"));
  for (const char* status : {"incomplete", "errored"}) {
    put(out, std::string(status) + "_total_input_tokens",
        stat("prompt_token_count", status, "total_sum"));
    put(out, std::string(status) + "_total_output_tokens",
        stat("output_token_count", status, "total_sum"));
  }
  // GuideLLM's rates are means of time-weighted rate distributions, not count / duration.
  put(out, "request_throughput", stat("requests_per_second", "successful", "mean"));
  put(out, "output_throughput", stat("output_tokens_per_second", "successful", "mean"));
  put(out, "total_token_throughput", stat("tokens_per_second", "successful", "mean"));
  put(out, "mean_concurrency", stat("request_concurrency", "successful", "mean"));
  distribution(out, "time_to_first_token_ms", "ttft_ms", 1.0);
  // GuideLLM's ITL, (last token − first token) / (tokens − 1), is vLLM's TPOT definition.
  distribution(out, "inter_token_latency_ms", "tpot_ms", 1.0);
  distribution(out, "request_latency", "e2el_ms", 1000.0);  // GuideLLM keeps seconds
  // GuideLLM's own TPOT (v0.3: (last − first) / tokens) for its Stats table.
  json tpot = json::object();
  distribution(tpot, "time_per_output_token_ms", "ms", 1.0);
  if (!tpot.empty()) out["guidellm_tpot"] = std::move(tpot);

  if (const json* worker = object_at(b, {"worker"})) {
    if (worker->contains("backend_model") && (*worker)["backend_model"].is_string()) {
      out["model_id"] = (*worker)["backend_model"];
    }
    if (worker->contains("backend_target") && (*worker)["backend_target"].is_string()) {
      out["base_url"] = (*worker)["backend_target"];
    }
  }
  out["backend"] = "guidellm";
  out["test_name"] = stem + "_" + out["guidellm_strategy"].get<std::string>();
  json source = {{"run_id", b.value("run_id", json(nullptr))},
                 {"benchmark_id", b.value("id_", json(nullptr))},
                 {"strategy", *strategy}};
  if (b.contains("extras")) source["extras"] = b["extras"];
  out["guidellm"] = std::move(source);
  return out;
}

}  // namespace

std::string utc_compact_date(double unix_seconds) {
  const auto t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  return text;
}

std::vector<RunResult> guidellm_runs(const json& report, const std::string& path) {
  const json& benchmarks = report["benchmarks"];
  if (benchmarks.empty()) {
    throw core::Error(core::ErrorKind::kInput, path, "a GuideLLM report with no benchmarks");
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  std::vector<RunResult> runs;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const Reader reader{path, "benchmarks[" + std::to_string(i) + "]"};
    RunResult run;
    run.source = path;
    run.format = "guidellm";
    run.result = one_benchmark(benchmarks[i], reader, stem);
    run.test_name = run.result["test_name"].get<std::string>();
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace servebench::report::importers
