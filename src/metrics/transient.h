// File: metrics/transient.h
// Warmup and cooldown windows: requests sent and recorded but left out of the metrics, as
// GuideLLM's warmup/cooldown (guidellm/benchmark/aggregator.py,
// GenerativeRequestsAggregator._is_in_warmup / _is_in_cooldown). This only decides which records
// are measured; metrics::compute then runs unchanged over those. docs/run.md gives the rules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "record/record.h"

namespace servebench::metrics {

// One window; every part given applies (a request in any of them is excluded).
struct TransientWindow {
  size_t number = 0;    // warmup: the first N requests to complete; cooldown: the last N
  double seconds = 0;   // warmup: requests due in the first S s; cooldown: ending in the last S s
  double fraction = 0;  // in (0, 1): this share of the run's bound (its duration, else its count)
  bool any() const { return number > 0 || seconds > 0 || fraction > 0; }
};

struct TransientSpec {
  TransientWindow warmup, cooldown;
  // The run's time bound (--duration); 0 = none: the run ends at its last completion, and
  // fractions are shares of the request count.
  double run_duration_s = 0;
  // The run's count bound for fractions without a duration; 0 = the records given.
  size_t planned = 0;
  bool any() const { return warmup.any() || cooldown.any(); }
};

enum class Phase { kMeasured, kWarmup, kCooldown };

struct TransientSplit {
  std::vector<Phase> phase;  // one per record, in the order given
  size_t warmup = 0, cooldown = 0;
};

// Which records fall in the warmup or cooldown window ("complete" = done_ns; vLLM --num-warmups
// records are left measured: metrics::compute already ignores them). A request in both windows
// counts as warmup, as GuideLLM checks warmup first. Throws core::Error (kUsage) for a fraction
// outside [0, 1) or a negative count of seconds.
TransientSplit split_transients(std::span<const record::RequestRecord> records,
                                const TransientSpec& spec);

// "warmup", "cooldown" or "" for measured.
const char* phase_name(Phase phase);

}  // namespace servebench::metrics
