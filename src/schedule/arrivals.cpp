// vLLM's arrival process (vllm/benchmarks/serve.py: get_request), drawn from numpy's legacy
// global generator as vLLM draws it (core/numpy_random.h).
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.h"
#include "core/numpy_random.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

void check_burstiness(double burstiness) {
  if (std::isnan(burstiness) || burstiness <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--burstiness",
                      "must be a positive number, got " + std::to_string(burstiness));
  }
}

void check_ramp_up(const RampUp& ramp_up) {
  // vLLM asserts a positive rate for every request; a start of 0 fails that on request 0.
  if (ramp_up.start_rps <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--ramp-up-start-rps",
                      "must be at least 1, got " + std::to_string(ramp_up.start_rps));
  }
  if (ramp_up.end_rps < ramp_up.start_rps) {
    throw core::Error(core::ErrorKind::kUsage, "--ramp-up-end-rps",
                      "must not be below --ramp-up-start-rps (" +
                          std::to_string(ramp_up.start_rps) + "), got " +
                          std::to_string(ramp_up.end_rps));
  }
}

// np.random.seed(seed) as vLLM's main does, then past the words a dataset drew from it.
core::NumpyRandomState numpy_global_state(const ArrivalOptions& options) {
  core::NumpyRandomState state(core::numpy_legacy_seed(options.seed, "random arrivals"));
  state.discard(options.numpy_words_before);
  return state;
}

// Request i's gap: np.random.gamma(shape=burstiness, scale=1 / (rate_i * burstiness)), or
// 1 / rate_i with burstiness inf (no draw), accumulated in order as vLLM sums them.
std::vector<double> cumulative_delays_s(size_t n, const ArrivalOptions& options) {
  const double shape = options.burstiness;
  std::optional<core::NumpyRandomState> numpy;
  if (!std::isinf(shape)) numpy.emplace(numpy_global_state(options));
  std::vector<double> delays(n);
  for (size_t i = 0; i < n; ++i) {
    const double rate =
        options.ramp_up ? ramp_up_rate(*options.ramp_up, i, n) : options.request_rate;
    delays[i] = std::isinf(shape) ? 1.0 / rate : numpy->gamma(shape, 1.0 / (rate * shape));
    if (i > 0) delays[i] += delays[i - 1];
  }
  return delays;
}

std::vector<int64_t> to_ns(const std::vector<double>& delays_s) {
  std::vector<int64_t> times(delays_s.size());
  for (size_t i = 0; i < delays_s.size(); ++i) times[i] = std::llround(delays_s[i] * 1e9);
  return times;
}

}  // namespace

const char* ramp_up_strategy_name(RampUpStrategy strategy) {
  return strategy == RampUpStrategy::kExponential ? "exponential" : "linear";
}

double ramp_up_rate(const RampUp& ramp_up, size_t index, size_t n) {
  const double progress =
      static_cast<double>(index) / static_cast<double>(std::max<size_t>(n, 2) - 1);
  const auto start = static_cast<double>(ramp_up.start_rps);
  const auto end = static_cast<double>(ramp_up.end_rps);
  if (ramp_up.strategy == RampUpStrategy::kExponential)
    return start * std::pow(end / start, progress);
  return start + (end - start) * progress;
}

std::vector<int64_t> arrival_times_ns(size_t n, const ArrivalOptions& options) {
  if (options.ramp_up) {
    check_burstiness(options.burstiness);
    check_ramp_up(*options.ramp_up);
    return to_ns(cumulative_delays_s(n, options));  // not rescaled, as in vLLM
  }
  const double rate = options.request_rate;
  if (std::isnan(rate) || rate <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--request-rate",
                      "must be a positive number or inf, got " + std::to_string(rate));
  }
  check_burstiness(options.burstiness);
  // Rate inf: every delay is 0 and vLLM draws nothing.
  if (std::isinf(rate) || n == 0) return std::vector<int64_t>(n, 0);

  // vLLM rescales so that the last request is due at n / rate (its factor, then each delay
  // times it, in the same floating-point steps).
  std::vector<double> delays = cumulative_delays_s(n, options);
  if (delays.back() != 0) {
    const double factor = (static_cast<double>(n) / rate) / delays.back();
    for (double& delay : delays) delay *= factor;
  }
  return to_ns(delays);
}

std::vector<int64_t> trace_times_ns(const std::vector<int64_t>& trace_offsets_ns,
                                    double time_scale) {
  if (!(time_scale > 0) || std::isinf(time_scale)) {
    throw core::Error(core::ErrorKind::kUsage, "--trace-time-scale",
                      "must be a positive number, got " + std::to_string(time_scale));
  }
  std::vector<int64_t> times;
  times.reserve(trace_offsets_ns.size());
  for (const int64_t offset : trace_offsets_ns) {
    if (offset < 0) {
      throw core::Error(core::ErrorKind::kInternal, "trace replay",
                        "negative trace offset " + std::to_string(offset) + " ns");
    }
    // In long double, so that scaling a week-long trace keeps nanoseconds exact.
    times.push_back(std::llround(static_cast<long double>(offset) * time_scale));
  }
  return times;
}

}  // namespace servebench::schedule
