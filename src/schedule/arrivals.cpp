#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
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

// Request i's gap has mean 1 / ramp_up_rate(i); the gaps are accumulated and not rescaled.
std::vector<int64_t> ramp_up_times_ns(size_t n, const ArrivalOptions& options) {
  const double shape = options.burstiness;
  std::vector<int64_t> times(n);
  std::mt19937_64 rng(options.seed);
  std::gamma_distribution<double> gap;
  double total_s = 0;
  for (size_t i = 0; i < n; ++i) {
    const double rate = ramp_up_rate(*options.ramp_up, i, n);
    if (std::isinf(shape)) {
      total_s += 1.0 / rate;
    } else {
      total_s += gap(rng, std::gamma_distribution<double>::param_type(shape, 1.0 / (rate * shape)));
    }
    times[i] = std::llround(total_s * 1e9);
  }
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
    return ramp_up_times_ns(n, options);
  }
  const double rate = options.request_rate;
  if (std::isnan(rate) || rate <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--request-rate",
                      "must be a positive number or inf, got " + std::to_string(rate));
  }
  check_burstiness(options.burstiness);
  std::vector<int64_t> times(n, 0);
  if (std::isinf(rate) || n == 0) return times;

  // Cumulative gaps in seconds; the first request also waits one gap, as in vLLM.
  std::vector<double> cumulative(n);
  double total = 0;
  if (std::isinf(options.burstiness)) {
    for (size_t i = 0; i < n; ++i) cumulative[i] = total += 1.0 / rate;
  } else {
    std::mt19937_64 rng(options.seed);
    std::gamma_distribution<double> gap(options.burstiness, 1.0 / (rate * options.burstiness));
    for (size_t i = 0; i < n; ++i) cumulative[i] = total += gap(rng);
  }
  const double scale = total > 0 ? (static_cast<double>(n) / rate) / total : 0.0;
  for (size_t i = 0; i < n; ++i) times[i] = std::llround(cumulative[i] * scale * 1e9);
  return times;
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
