// File: cli/run_limits.h
// What bounds and shapes a `servebench run` besides vLLM's flags: GuideLLM's load profiles
// (--profile, --rate), a time bound (--duration), warmup/cooldown windows left out of the
// metrics, and stop rules (--max-errors, --max-error-rate). Plain data, part of RunConfig;
// run_profiles.cpp parses and carries it out. Internal to the cli part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/transient.h"

namespace servebench::cli::run {

// GuideLLM's profile types (guidellm/benchmark/profile.py), kNone = vLLM's --request-rate /
// --max-concurrency traffic.
enum class LoadProfile {
  kNone,
  kSynchronous,
  kThroughput,
  kConcurrent,
  kConstant,
  kPoisson,
  kSweep
};

struct RunLimits {
  LoadProfile profile = LoadProfile::kNone;
  // --rate as GuideLLM reads it: concurrent = streams, constant/poisson = requests per second
  // (a list runs one benchmark each), throughput = its max concurrency, sweep = {benchmarks}.
  std::vector<double> rates;
  int sweep_size = 10;
  double duration_s = 0;              // --duration; 0 = bounded by the request count only
  size_t max_requests = 0;            // the plan's size cap (--num-prompts)
  bool max_requests_given = false;    // --num-prompts was given (else a rate × duration sizes it)
  metrics::TransientSpec transients;  // warmup/cooldown (run_duration_s and planned set per run)
  int64_t max_errors = 0;             // --max-errors; 0 = none
  double max_error_rate = 0;          // --max-error-rate in (0, 1); 0 = none
  size_t error_rate_window = 30;      // GuideLLM's MaxErrorRateConstraint window

  // --- the benchmark being run (set per run by BenchmarkSequence)
  LoadProfile strategy = LoadProfile::kNone;  // synchronous … poisson; kNone = vLLM's traffic
  std::string benchmark;  // GuideLLM's name: "synchronous", "constant@1.25", …
  size_t sequence = 0;    // its place in the profile's benchmarks (0-based)

  bool bounds_plan() const { return profile != LoadProfile::kNone || duration_s > 0; }
};

}  // namespace servebench::cli::run
