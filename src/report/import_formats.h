// File: report/import_formats.h (internal to the report part)
// Other tools' result files mapped onto vLLM's result keys, so every layout reads them as it
// reads a vLLM result: GuideLLM's benchmarks report (import_guidellm.cpp), inference-perf's
// lifecycle reports (import_inference_perf.cpp), AIPerf's and genai-perf's profile exports
// (import_aiperf.cpp), SGLang bench_serving's JSONL (import_sglang.cpp) and servebench's own SLO
// search summary (import_search.cpp). import.cpp tells the formats apart. Each throws core::Error
// (kInput) naming the file and the key for a report it cannot read.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/tables.h"

namespace servebench::report {
// Whether a parsed file is a search.json; the probe results it names (import_search.cpp).
bool is_search_summary(const nlohmann::json& j);
std::vector<std::string> search_probe_paths(const nlohmann::json& summary, const std::string& path);
}  // namespace servebench::report

namespace servebench::report::importers {

// Reads a report's keys: every failure is a core::Error (kInput) naming the file and the key,
// `at` + `key` ("successes.latency." + "p99").
struct KeyReader {
  std::string path;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // The object at `key`, or null when absent or null; anything else is an error.
  const nlohmann::json* object(const nlohmann::json& j, const std::string& key,
                               const std::string& at) const;
  // The number at `key`, or nullopt when absent or null; anything else is an error.
  std::optional<double> number(const nlohmann::json& j, const std::string& key,
                               const std::string& at) const;
};
// The object at a path of keys, or null when one is missing or not an object.
const nlohmann::json* object_at(const nlohmann::json& j, std::initializer_list<const char*> keys);
// out[key] = v, when there is a v.
void put(nlohmann::json& out, const std::string& key, const std::optional<double>& v);

// One run per entry of a GuideLLM report's "benchmarks" array.
std::vector<RunResult> guidellm_runs(const nlohmann::json& report, const std::string& path);
// One run from an inference-perf summary or stage lifecycle report.
RunResult inference_perf_run(const nlohmann::json& report, const std::string& path);

// AIPerf's profile_export_aiperf.json: markers only it writes (schema_version, aiperf_version,
// a benchmark_duration block, input_config.endpoint).
bool is_aiperf_export(const nlohmann::json& j);
// genai-perf's profile_export_genai_perf.json: metric blocks ({"unit", "avg", …}) without them.
bool is_genai_perf_export(const nlohmann::json& j);
RunResult aiperf_run(const nlohmann::json& report, const std::string& path);
RunResult genai_perf_run(const nlohmann::json& report, const std::string& path);
// Their CSV exports read back into metric blocks keyed by tag ("Time to First Token (ms)" →
// "time_to_first_token": {"unit": "ms", "avg": …}); GPU telemetry sections are skipped.
struct StatsCsv {
  nlohmann::json stats;
  bool genai_perf_layout = false;  // genai-perf's header order: avg,min,max,p99,p95,…,p25
};
StatsCsv read_stats_csv(const std::string& text, const std::string& path);

// A SGLang bench_serving result line: vLLM-like keys plus SGLang's own (mean_e2e_latency_ms,
// total_output_tokens_retokenized).
bool is_sglang_result(const nlohmann::json& j);
// One run per line of its JSONL output (a single-line .json is one line too).
std::vector<RunResult> sglang_runs(const std::vector<nlohmann::json>& lines,
                                   const std::string& path);

// The probes of `servebench run --search-slo`'s search.json, each its own saved result with the
// probe under `servebench.search` (import_search.cpp).
std::vector<RunResult> search_runs(const nlohmann::json& summary, const std::string& path);

// "%Y%m%d-%H%M%S" in UTC for a Unix time in seconds (the result key "date").
std::string utc_compact_date(double unix_seconds);

}  // namespace servebench::report::importers
