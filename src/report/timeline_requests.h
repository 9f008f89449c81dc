// File: report/timeline_requests.h (private to report)
// The client side of a timeline (timeline.cpp): each request's times, from a run's records file
// or from vLLM's --save-detailed arrays, for the panels to count per window.
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include "report/tables.h"

namespace servebench::report {

// One request's times in seconds since the run's start; NaN where it did not happen.
struct RequestTimes {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double sent_s = kNone, first_token_s = kNone, end_s = kNone;
  bool success = false;
  std::vector<double> chunk_s;       // arrival of every content chunk
  std::vector<double> chunk_tokens;  // output tokens each chunk carried (spread evenly if unknown)
};

// From the records JSONL the run wrote (where its result says, or beside it); nullopt when there
// is none. Warmups and requests never sent are left out. Throws core::Error naming the file and
// line of a bad record.
std::optional<std::vector<RequestTimes>> requests_from_records(const RunResult& run);
// From vLLM's --save-detailed arrays (servebench writes them too); nullopt when they are absent.
// vLLM's start times are raw perf_counter readings, so the earliest becomes 0. Throws
// core::Error naming the array and index of a bad entry.
std::optional<std::vector<RequestTimes>> requests_from_detailed_arrays(const RunResult& run);

}  // namespace servebench::report
