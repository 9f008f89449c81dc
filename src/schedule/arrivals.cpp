#include <cmath>
#include <random>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {

std::vector<int64_t> arrival_times_ns(size_t n, const ArrivalOptions& options) {
  const double rate = options.request_rate;
  if (std::isnan(rate) || rate <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--request-rate",
                      "must be a positive number or inf, got " + std::to_string(rate));
  }
  if (std::isnan(options.burstiness) || options.burstiness <= 0) {
    throw core::Error(core::ErrorKind::kUsage, "--burstiness",
                      "must be a positive number, got " + std::to_string(options.burstiness));
  }
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
