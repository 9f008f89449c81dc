// File: report/import_formats.h (internal to the report part)
// Other tools' result files mapped onto vLLM's result keys, so every layout reads them as it
// reads a vLLM result: GuideLLM's benchmarks report (import_guidellm.cpp) and inference-perf's
// lifecycle reports (import_inference_perf.cpp); servebench's own SLO search summary
// (import_search.cpp). import.cpp tells the formats apart. Each throws
// core::Error (kInput) naming the file and the key for a report it cannot read.
#pragma once

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

// One run per entry of a GuideLLM report's "benchmarks" array.
std::vector<RunResult> guidellm_runs(const nlohmann::json& report, const std::string& path);
// One run from an inference-perf summary or stage lifecycle report.
RunResult inference_perf_run(const nlohmann::json& report, const std::string& path);

// The probes of `servebench run --search-slo`'s search.json, each its own saved result with the
// probe under `servebench.search` (import_search.cpp).
std::vector<RunResult> search_runs(const nlohmann::json& summary, const std::string& path);

// "%Y%m%d-%H%M%S" in UTC for a Unix time in seconds (the result key "date").
std::string utc_compact_date(double unix_seconds);

}  // namespace servebench::report::importers
