// File: schedule/schedule.h
// The plan of intended send times: a pure, seeded function of (count, rate, burstiness, seed).
// It knows nothing of prompts or HTTP. The client sends request i at t0 + intended_ns[i] (or
// later, when --max-concurrency holds it back, and records both times).
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

}  // namespace servebench::schedule
