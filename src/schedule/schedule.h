// File: schedule/schedule.h
// The plan of intended send times: a pure, seeded function of (count, rate or ramp-up,
// burstiness, seed), or a trace's own timestamps scaled in time. It knows nothing of prompts or
// HTTP. The client sends request i at t0 + intended_ns[i] (or later, when --max-concurrency holds
// it back, and records both times).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace servebench::schedule {

// vLLM's ramp-up (--ramp-up-strategy, --ramp-up-start-rps, --ramp-up-end-rps): the rate rises
// from start_rps at the first request to end_rps at the last.
enum class RampUpStrategy { kLinear, kExponential };
struct RampUp {
  RampUpStrategy strategy = RampUpStrategy::kLinear;
  int64_t start_rps = 1;  // integers, as vLLM's flags are
  int64_t end_rps = 1;
};
// "linear" or "exponential", as vLLM spells them.
const char* ramp_up_strategy_name(RampUpStrategy strategy);
// The rate of request `index` (0-based) of `n`, with progress p = index / max(n - 1, 1):
// linear start + (end - start) * p, exponential start * (end / start)^p (vLLM's
// _get_current_request_rate, in the same floating-point steps).
double ramp_up_rate(const RampUp& ramp_up, size_t index, size_t n);

struct ArrivalOptions {
  // Requests per second; infinity sends everything at t0 (vLLM's default).
  double request_rate = std::numeric_limits<double>::infinity();
  // Gamma shape: 1 = Poisson, < 1 burstier, > 1 more regular, infinity = constant spacing.
  double burstiness = 1.0;
  // numpy's np.random.seed(seed), as vLLM's main seeds it: below 2^32.
  uint64_t seed = 0;
  // Set: each request's own rate (ramp_up_rate) instead of request_rate.
  std::optional<RampUp> ramp_up = std::nullopt;
  // 32-bit words the dataset drew from numpy's global generator after seeding it
  // (dataset::DatasetReport::numpy_global_words; vLLM's prefix_repetition does), so the gaps
  // continue the stream where vLLM's do.
  uint64_t numpy_words_before = 0;
};

// vLLM's arrival process: gamma inter-arrival gaps with shape = burstiness and mean 1/rate,
// accumulated, then rescaled so that the last arrival lands exactly at n / rate (vLLM does this
// to remove the random drift of the total). With ramp_up, request i's gap has mean
// 1 / ramp_up_rate(i) (exactly that with burstiness inf) and nothing is rescaled, as in vLLM.
// The first request also waits its gap. The gaps are vLLM's np.random.gamma draws, bit for bit
// (core::NumpyRandomState), so a seed gives vLLM's times (rounded to ns). Returns n
// non-decreasing times in ns from t0. Throws core::Error (kUsage) on a rate <= 0 or NaN,
// a burstiness <= 0 or NaN, a ramp-up start_rps <= 0 or an end_rps below it, a seed >= 2^32
// when gaps are drawn.
std::vector<int64_t> arrival_times_ns(size_t n, const ArrivalOptions& options);

// Trace replay: request i is due at trace_offsets_ns[i] * time_scale after t0 (2 = twice as
// slow, 0.5 = twice as fast; SGLang's --mooncake-slowdown-factor). The offsets are the trace's
// timestamps after its first request. Throws core::Error (kUsage, --trace-time-scale) on a scale
// <= 0, NaN or inf, and (kInternal) on a negative offset.
std::vector<int64_t> trace_times_ns(const std::vector<int64_t>& trace_offsets_ns,
                                    double time_scale);

// GuideLLM's rate profiles (guidellm/scheduler/strategies.py: AsyncConstantStrategy,
// AsyncPoissonStrategy), bounded by a duration and a count: request i of `constant` is due at
// i / rate (the first at t0); `poisson` draws exponential gaps of mean 1 / rate, seeded, the
// first at t0. Only times before `duration_s` are kept (duration_s <= 0: no time bound), and at
// most `max_count`. Throws core::Error (kUsage, --rate) on a rate <= 0, inf or NaN.
std::vector<int64_t> constant_times_ns(double rate, double duration_s, size_t max_count);
std::vector<int64_t> poisson_times_ns(double rate, double duration_s, size_t max_count,
                                      uint64_t seed);
// How many requests a rate sends in a duration: ceil(rate * duration), at least 1.
size_t requests_within(double rate, double duration_s);

// inference-perf's load stages (inference_perf/loadgen: LoadGenerator.run_stage, load_timer.py):
// a stage sends int(rate × duration) requests (truncated, as inference-perf does), its times
// in ns from the stage's own t0. kConstant is inference-perf's ConstantLoadTimer: exponential
// gaps of mean 1 / rate rescaled so that they sum to the duration (the last request lands at
// duration_s). kPoisson is its PoissonLoadTimer: each second draws a Poisson(rate) count (a
// second drawing 0 stays empty) and spreads that many over the second as kConstant does, until
// the stage's count is reached. Seeded: the same stage and seed give the same times. Throws
// core::Error (kUsage, --stages) on a rate or duration <= 0, inf or NaN, or a count of 0.
enum class StageArrival { kConstant, kPoisson };
struct LoadStage {
  double rate = 0;        // requests per second
  double duration_s = 0;  // seconds
};
size_t stage_request_count(const LoadStage& stage);
std::vector<int64_t> stage_times_ns(const LoadStage& stage, StageArrival arrival, uint64_t seed);

}  // namespace servebench::schedule
