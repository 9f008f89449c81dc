// File: cli/run_profiles.h
// Carrying out RunLimits (run_limits.h) for run_execute.cpp: the flags, the sequence of
// benchmarks (vLLM's rate × concurrency lists, or a GuideLLM profile, whose sweep picks its rates
// from the first two results), the plan of a time- or count-bounded run, stop rules watched per
// record, and the warmup/cooldown split before the metrics. docs/run.md describes the behaviour.
// Internal to the cli part.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_config.h"
#include "client/client.h"
#include "dataset/dataset.h"
#include "metrics/transient.h"
#include "record/record.h"
#include "report/tables.h"

namespace servebench::cli::run {

// ---- flags (as given; "" = not given)
struct LoadFlags {
  std::string profile{}, rate{}, duration{};
  std::string warmup{}, cooldown{}, warmup_number{}, warmup_duration{}, cooldown_number{},
      cooldown_duration{};
  std::string max_errors{}, max_error_rate{};
};
// Checks the flags against each other and vLLM's, and fills c.limits (and c.num_prompts when a
// rate × duration sizes the run). Throws core::Error kUsage naming the flag.
void apply_load_flags(const LoadFlags& f, const std::function<bool(const char*)>& given,
                      RunConfig& c);

// ---- the benchmarks of a run, in order
class BenchmarkSequence {
 public:
  explicit BenchmarkSequence(const RunConfig& c) : base_(c) {}
  // The next benchmark's config, given the results so far (a sweep reads the request rates
  // of its synchronous and throughput benchmarks), or nullopt when done. Throws core::Error
  // when a sweep cannot choose its rates (its throughput benchmark completed nothing).
  std::optional<RunConfig> next(std::span<const report::RunResult> done);

 private:
  const RunConfig& base_;
  size_t index_ = 0;
  std::vector<double> sweep_rates_;  // a sweep's constant rates, once known
};

// The plan of a run bounded by --duration or shaped by --profile (not a trace): the arrival
// times of its strategy within the duration, at most limits.max_requests, prompts reused
// cyclically when the plan is longer than the dataset.
std::vector<client::PlannedRequest> bounded_plan(const RunConfig& c,
                                                 const std::vector<dataset::Prompt>& prompts);

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
TrimmedRun trim_transients(const RunConfig& c, const std::vector<record::RequestRecord>& records);

// Rewrites the records file with "excluded": "warmup" / "cooldown" on the excluded requests'
// lines (by index; vLLM --num-warmups lines untouched), through a temporary file and a rename.
void mark_excluded_records(const std::string& path,
                           const std::vector<record::RequestRecord>& records,
                           const metrics::TransientSplit& split);

// The result JSON's servebench "load" section: profile, benchmark, bounds, what was excluded and
// why, and what stopped the run.
nlohmann::json load_json(const RunConfig& c, const TrimmedRun& trimmed, const StopOutcome& stop,
                         bool duration_ended);
// Console lines for the same (empty when there is nothing to say).
std::string load_console_lines(const RunConfig& c, const TrimmedRun& trimmed,
                               const StopOutcome& stop);

// Lines printed before a run: its GuideLLM benchmark and time bound ("" for vLLM's traffic).
std::string load_header_lines(const RunConfig& c);
// Whether --duration ended the run (requests unsent or cancelled), not the plan running out.
bool ended_by_duration(const RunConfig& c, const std::vector<record::RequestRecord>& records,
                       size_t not_sent);

const char* profile_name(LoadProfile p);

}  // namespace servebench::cli::run
