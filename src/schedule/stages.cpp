// inference-perf's load stages: how many requests a stage sends and when (schedule.h).
#include <cmath>
#include <random>
#include <string>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

// The most requests one stage may plan (as --num-prompts' bound).
constexpr double kMaxStageRequests = 100'000'000;

std::string number_text(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void check_stage(const LoadStage& stage) {
  if (!(stage.rate > 0) || std::isinf(stage.rate)) {
    throw core::Error(core::ErrorKind::kUsage, "--stages",
                      "a stage's rate must be a positive number, got " + number_text(stage.rate));
  }
  if (!(stage.duration_s > 0) || std::isinf(stage.duration_s)) {
    throw core::Error(core::ErrorKind::kUsage, "--stages",
                      "a stage's duration must be a positive number of seconds, got " +
                          number_text(stage.duration_s));
  }
}

// `count` times after `start_s`: exponential gaps rescaled to sum to `span_s`, appended in
// seconds (ConstantLoadTimer.start_timer).
void spread_over(size_t count, double rate, double start_s, double span_s, std::mt19937_64& rng,
                 std::vector<double>& out) {
  std::exponential_distribution<double> gap(rate);
  std::vector<double> gaps(count);
  double total = 0;
  for (double& g : gaps) total += g = gap(rng);
  const double scale = total > 0 ? span_s / total : 0.0;
  double t = start_s;
  for (double g : gaps) out.push_back(t += g * scale);
}

}  // namespace

size_t stage_request_count(const LoadStage& stage) {
  check_stage(stage);
  const double n = std::floor(stage.rate * stage.duration_s);  // Python's int() of a product > 0
  if (n < 1) {
    throw core::Error(core::ErrorKind::kUsage, "--stages",
                      "rate " + number_text(stage.rate) + " × duration " +
                          number_text(stage.duration_s) +
                          " s gives no request (inference-perf sends int(rate × duration))");
  }
  if (n > kMaxStageRequests) {
    throw core::Error(core::ErrorKind::kUsage, "--stages",
                      "rate × duration gives more than 100000000 requests in one stage");
  }
  return static_cast<size_t>(n);
}

std::vector<int64_t> stage_times_ns(const LoadStage& stage, StageArrival arrival, uint64_t seed) {
  const size_t n = stage_request_count(stage);
  std::mt19937_64 rng(seed);
  std::vector<double> seconds;
  seconds.reserve(n);
  if (arrival == StageArrival::kConstant) {
    spread_over(n, stage.rate, 0.0, stage.duration_s, rng, seconds);
  } else {
    // One-second windows, each with a Poisson(rate) count spread over it; the last window is
    // cut at the stage's count.
    std::poisson_distribution<long long> per_second(stage.rate);
    std::vector<double> window;
    for (double start = 0; seconds.size() < n; start += 1.0) {
      const long long count = per_second(rng);
      if (count < 1) continue;
      window.clear();
      spread_over(static_cast<size_t>(count), static_cast<double>(count), start, 1.0, rng, window);
      for (size_t i = 0; i < window.size() && seconds.size() < n; ++i) seconds.push_back(window[i]);
    }
  }
  std::vector<int64_t> times;
  times.reserve(n);
  for (double s : seconds) times.push_back(std::llround(s * 1e9));
  return times;
}

}  // namespace servebench::schedule
