// File: schedule/schedule.h
// The plan of intended send times: a pure, seeded function of (count, rate, burstiness, seed),
// or a trace's own timestamps scaled in time. It knows nothing of prompts or HTTP. The client sends
// request i at t0 + intended_ns[i] (or later, when --max-concurrency holds it back, and records
// both times).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace servebench::schedule {

struct ArrivalOptions {
  // Requests per second; infinity sends everything at t0 (vLLM's default).
  double request_rate = std::numeric_limits<double>::infinity();
  // Gamma shape: 1 = Poisson, < 1 burstier, > 1 more regular, infinity = constant spacing.
  double burstiness = 1.0;
  uint64_t seed = 0;
};

// vLLM's arrival process: gamma inter-arrival gaps with shape = burstiness and mean 1/rate,
// accumulated, then rescaled so that the last arrival lands exactly at n / rate (vLLM does this
// to remove the random drift of the total). Returns n non-decreasing times in ns from t0; the
// same options give the same times, bit for bit. Throws core::Error on a rate <= 0 or NaN or a
// burstiness <= 0.
std::vector<int64_t> arrival_times_ns(size_t n, const ArrivalOptions& options);

// Trace replay: request i is due at trace_offsets_ns[i] * time_scale after t0 (2 = twice as
// slow, 0.5 = twice as fast; SGLang's --mooncake-slowdown-factor). The offsets are the trace's
// timestamps after its first request. Throws core::Error (kUsage, --trace-time-scale) on a scale
// <= 0, NaN or inf, and (kInternal) on a negative offset.
std::vector<int64_t> trace_times_ns(const std::vector<int64_t>& trace_offsets_ns,
                                    double time_scale);

}  // namespace servebench::schedule
