// inference-perf's lifecycle reports (summary_lifecycle_metrics.json and
// stage_<N>_lifecycle_metrics.json) mapped onto vLLM's result keys. The schema is
// inference_perf/reportgen/base.py's ResponsesSummary (summarize_requests): top-level
// "benchmark_time_seconds", "load_summary" (count, send_duration, requested_rate, achieved_rate,
// concurrency), "successes" (count; latency.{request_latency, time_to_first_token,
// time_per_output_token, inter_token_latency} summaries with mean, median, p<N> in seconds;
// throughput.{requests_per_sec, input_/output_/total_tokens_per_sec}; prompt_tokens.total and
// output_tokens.total, or in earlier versions prompt_len / output_len summaries) and
// "failures" (count). docs/reports.md says where the definitions differ from vLLM's.
#include <filesystem>

#include "core/error.h"
#include "report/import_formats.h"

namespace servebench::report::importers {
namespace {

using nlohmann::json;

using Reader = KeyReader;

}  // namespace

RunResult inference_perf_run(const json& report, const std::string& path) {
  const Reader r{path};
  const json* successes = r.object(report, "successes", "");
  if (!successes) r.fail("successes", "missing: not an inference-perf lifecycle report");
  const json* failures = r.object(report, "failures", "");
  const json* load = r.object(report, "load_summary", "");

  json out = json::object();
  const auto completed = r.number(*successes, "count", "successes.");
  if (!completed) r.fail("successes.count", "missing");
  out["completed"] = static_cast<int64_t>(*completed);
  const auto failed = failures ? r.number(*failures, "count", "failures.") : std::nullopt;
  if (failed) out["failed"] = static_cast<int64_t>(*failed);
  put(out, "duration", r.number(report, "benchmark_time_seconds", ""));
  if (load) {
    put(out, "request_rate", r.number(*load, "requested_rate", "load_summary."));
    put(out, "max_concurrency", r.number(*load, "concurrency", "load_summary."));
    put(out, "achieved_rate", r.number(*load, "achieved_rate", "load_summary."));
  }

  // Token totals: prompt_tokens.total / output_tokens.total, or mean × count in versions that
  // kept only the prompt_len / output_len summaries.
  auto total = [&](const char* total_key, const char* len_key) -> std::optional<double> {
    if (const json* t = r.object(*successes, total_key, "successes.")) {
      if (auto v = r.number(*t, "total", std::string("successes.") + total_key + ".")) return v;
    }
    if (const json* l = r.object(*successes, len_key, "successes.")) {
      if (auto mean = r.number(*l, "mean", std::string("successes.") + len_key + ".")) {
        return *mean * *completed;
      }
    }
    return std::nullopt;
  };
  put(out, "total_input_tokens", total("prompt_tokens", "prompt_len"));
  put(out, "total_output_tokens", total("output_tokens", "output_len"));

  if (const json* t = r.object(*successes, "throughput", "successes.")) {
    const std::string at = "successes.throughput.";
    put(out, "request_throughput", r.number(*t, "requests_per_sec", at));
    put(out, "output_throughput", r.number(*t, "output_tokens_per_sec", at));
    put(out, "total_token_throughput", r.number(*t, "total_tokens_per_sec", at));
    put(out, "input_throughput", r.number(*t, "input_tokens_per_sec", at));
  }
  if (const json* latency = r.object(*successes, "latency", "successes.")) {
    // Seconds in the report; vLLM's keys are in ms.
    const std::pair<const char*, const char*> kMap[] = {{"request_latency", "e2el_ms"},
                                                        {"time_to_first_token", "ttft_ms"},
                                                        {"time_per_output_token", "tpot_ms"},
                                                        {"inter_token_latency", "itl_ms"}};
    for (const auto& [name, suffix] : kMap) {
      const std::string at = std::string("successes.latency.") + name + ".";
      const json* s = r.object(*latency, name, "successes.latency.");
      if (!s) continue;
      for (const char* stat : {"mean", "median", "p90", "p95", "p99"}) {
        if (auto v = r.number(*s, stat, at)) out[std::string(stat) + "_" + suffix] = *v * 1000.0;
      }
    }
  }
  out["backend"] = "inference-perf";
  json source = json::object();
  if (load) source["load_summary"] = *load;
  out["inference_perf"] = std::move(source);

  RunResult run;
  run.source = path;
  run.format = "inference-perf";
  run.test_name = std::filesystem::path(path).stem().string();
  run.result = std::move(out);
  return run;
}

}  // namespace servebench::report::importers
