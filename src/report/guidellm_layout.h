// File: report/guidellm_layout.h (internal to the report part)
// GuideLLM's Info and Stats tables of one sweep (tables.cpp); guidellm_report.cpp puts the
// Metadata block above them and one such block per input.
#pragma once

#include <span>
#include <string>

#include "report/tables.h"

namespace servebench::report {

std::string guidellm_info_stats(std::span<const RunResult> runs);

}  // namespace servebench::report
