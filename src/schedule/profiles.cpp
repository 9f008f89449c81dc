// GuideLLM's rate strategies as send times bounded by a duration (schedule.h).
#include <cmath>
#include <random>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

void check_rate(double rate) {
  if (!(rate > 0) || std::isinf(rate)) {
    throw core::Error(
        core::ErrorKind::kUsage, "--rate",
        "must be a positive number of requests per second, got " + std::to_string(rate));
  }
}

bool within(double seconds, double duration_s) {
  return duration_s <= 0 || seconds < duration_s;
}

}  // namespace

std::vector<int64_t> constant_times_ns(double rate, double duration_s, size_t max_count) {
  check_rate(rate);
  std::vector<int64_t> times;
  for (size_t i = 0; i < max_count; ++i) {
    // i / rate, not a running sum: no drift over a long run.
    const double at = static_cast<double>(i) / rate;
    if (!within(at, duration_s)) break;
    times.push_back(std::llround(at * 1e9));
  }
  return times;
}

std::vector<int64_t> poisson_times_ns(double rate, double duration_s, size_t max_count,
                                      uint64_t seed) {
  check_rate(rate);
  std::vector<int64_t> times;
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  double at = 0;  // the first request at t0, then exponential gaps (GuideLLM's poisson)
  for (size_t i = 0; i < max_count && within(at, duration_s); ++i) {
    times.push_back(std::llround(at * 1e9));
    at += gap(rng);
  }
  return times;
}

size_t requests_within(double rate, double duration_s) {
  check_rate(rate);
  const double n = std::ceil(rate * duration_s - 1e-9);  // 4 req/s for 2 s is 8, not 9
  return n < 1 ? 1 : static_cast<size_t>(n);
}

}  // namespace servebench::schedule
