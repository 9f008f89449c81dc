// File: run/load_rules.h
// Executing one point under GuideLLM's rules: stop rules watched per record, the warmup/cooldown
// split before the metrics, and the lines that say so. docs/run.md describes the behaviour.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "metrics/transient.h"
#include "record/record.h"
#include "run/run.h"

namespace servebench::run {

// ---- stop rules, GuideLLM's MaxErrorsConstraint and MaxErrorRateConstraint
// (guidellm/scheduler/constraints.py): an error is a request that failed other than by being
// cancelled or never sent; the rate is over the last `error_rate_window` requests and applies
// once that many were processed.
struct StopOutcome {
  std::string rule;     // "" = no rule tripped; "max_errors" or "max_error_rate"
  std::string message;  // e.g. "--max-errors 3: 3 requests errored"
  size_t processed = 0, errors = 0;
};

class StopRules {
 public:
  // `stop` is set when a rule trips (the client then drains the requests in flight).
  StopRules(const RunLimits& limits, std::atomic<bool>* stop) : limits_(limits), stop_(stop) {}
  // Every record of the run, in completion order (the client's delivering thread).
  void observe(const record::RequestRecord& r);
  bool tripped() const { return !outcome_.rule.empty(); }
  const StopOutcome& outcome() const { return outcome_; }

 private:
  const RunLimits& limits_;
  std::atomic<bool>* stop_;
  StopOutcome outcome_;
  std::vector<bool> window_;  // ring of the last requests' error flags
  size_t window_next_ = 0, window_errors_ = 0;
};

// ---- warmup/cooldown
struct TrimmedRun {
  bool trimmed = false;  // false: nothing excluded; use the records and duration as they are
  std::vector<record::RequestRecord> measured;
  double duration_s = 0;  // first send to last completion of the measured requests
  metrics::TransientSplit split;
};
TrimmedRun trim_transients(const Spec& c, const std::vector<record::RequestRecord>& records);

// Rewrites the records file with "excluded": "warmup" / "cooldown" on the excluded requests'
// lines (by index; vLLM --num-warmups lines untouched), through a temporary file and a rename.
void mark_excluded_records(const std::string& path,
                           const std::vector<record::RequestRecord>& records,
                           const metrics::TransientSplit& split);

// Console lines saying what was excluded and what stopped the point (empty when nothing).
std::string load_console_lines(const Spec& c, const TrimmedRun& trimmed, const StopOutcome& stop);

// Lines printed before a run: its GuideLLM benchmark and time bound ("" for vLLM's traffic).
std::string load_header_lines(const Spec& c);
// Whether --duration ended the run (requests unsent or cancelled), not the plan running out.
bool ended_by_duration(const Spec& c, const std::vector<record::RequestRecord>& records,
                       size_t not_sent);

}  // namespace servebench::run
