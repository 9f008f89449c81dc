// File: report/guidellm_layout.h (internal to the report part)
// GuideLLM's Info and Stats tables of one sweep (guidellm_tables.cpp); guidellm_report.cpp puts
// the Metadata block above them and one such block per input. Also what those tables share with
// the other seed layouts of tables.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "report/tables.h"

namespace servebench::report {

std::string guidellm_info_stats(std::span<const RunResult> runs);

// A benchmark's GuideLLM name: an imported GuideLLM report's strategy, or what `run --profile`
// named it (`servebench.load.benchmark`: "synchronous", "constant@0.93"); "" for other runs.
std::string benchmark_name(const RunResult& run);

// What a table shows for a figure the result does not hold.
inline constexpr const char* kNotAvailable = "n/a";
// The string member `key` of `j`, if it is one.
std::optional<std::string> string_at(const nlohmann::json& j, const std::string& key);
// total / count per request (0 when nothing completed); nullopt when either is unknown.
std::optional<double> per_request(const std::optional<double>& total,
                                  const std::optional<double>& count);

}  // namespace servebench::report
