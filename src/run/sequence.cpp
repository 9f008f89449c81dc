// GuideLLM's profiles (guidellm/benchmark/profile.py) and vLLM's lists as a sequence of points.
#include "run/sequence.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "run/names.h"

namespace servebench::run {
namespace {

// A sweep's constant rates: GuideLLM's SweepProfile.next_strategy,
// np.linspace(synchronous_rate, throughput_rate, sweep_size - 1)[1:].
std::vector<double> sweep_rates(double synchronous, double throughput, int sweep_size) {
  std::vector<double> rates;
  const int points = sweep_size - 1;
  for (int k = 1; k < points; ++k)
    rates.push_back(synchronous + (throughput - synchronous) * k / (points - 1));
  return rates;
}

// GuideLLM's throughput benchmark runs at most its max_concurrency setting at once (512 by
// default, guidellm/settings.py; seed 003's throughput row shows 512 incomplete requests).
int throughput_concurrency(const Spec& c) {
  constexpr int kGuidellmMaxConcurrency = 512;
  return c.max_concurrency > 0 ? c.max_concurrency : kGuidellmMaxConcurrency;
}

void set_benchmark(Spec& point, LoadProfile strategy, double rate, int concurrency) {
  point.request_rate = rate;
  point.max_concurrency = concurrency;
  point.request_rates = {rate};
  point.max_concurrencies = {concurrency};
  point.limits.strategy = strategy;
  switch (strategy) {
    case LoadProfile::kSynchronous:
      point.limits.benchmark = "synchronous";
      break;
    case LoadProfile::kThroughput:
      point.limits.benchmark = "throughput";
      break;
    case LoadProfile::kConcurrent:
      point.limits.benchmark = fmt::format("concurrent@{}", concurrency);
      break;
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      // GuideLLM's strategy_display_str: "constant@1.25". The spacing is in the plan; the
      // burstiness names it for vLLM-style readers (inf = constant, 1 = Poisson).
      point.burstiness =
          strategy == LoadProfile::kConstant ? std::numeric_limits<double>::infinity() : 1.0;
      point.limits.benchmark = fmt::format("{}@{:.2f}", profile_name(strategy), rate);
      break;
    default:
      break;
  }
}

}  // namespace

std::optional<Spec> BenchmarkSequence::next(std::span<const report::RunResult> done) {
  const RunLimits& L = base_.limits;
  Spec point = base_;
  const size_t i = index_;
  const double inf = std::numeric_limits<double>::infinity();
  switch (L.profile) {
    case LoadProfile::kNone: {
      const size_t per_rate = base_.max_concurrencies.size();
      if (i >= base_.request_rates.size() * per_rate) return std::nullopt;
      point.request_rate = base_.request_rates[i / per_rate];
      point.max_concurrency = base_.max_concurrencies[i % per_rate];
      break;
    }
    case LoadProfile::kSynchronous:
      if (i >= 1) return std::nullopt;
      set_benchmark(point, LoadProfile::kSynchronous, inf, 1);
      break;
    case LoadProfile::kThroughput:
      if (i >= 1) return std::nullopt;
      set_benchmark(point, LoadProfile::kThroughput, inf, throughput_concurrency(base_));
      break;
    case LoadProfile::kConcurrent:
      if (i >= L.rates.size()) return std::nullopt;
      set_benchmark(point, LoadProfile::kConcurrent, inf, static_cast<int>(L.rates[i]));
      break;
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      if (i >= L.rates.size()) return std::nullopt;
      set_benchmark(point, L.profile, L.rates[i], base_.max_concurrency);
      break;
    case LoadProfile::kSweep: {
      if (i >= static_cast<size_t>(L.sweep_size)) return std::nullopt;
      if (i == 0) {
        set_benchmark(point, LoadProfile::kSynchronous, inf, 1);
        break;
      }
      if (i == 1) {
        set_benchmark(point, LoadProfile::kThroughput, inf, throughput_concurrency(base_));
        break;
      }
      if (sweep_rates_.empty()) {
        // GuideLLM reads requests_per_second.successful.mean; here completed / duration. A
        // benchmark that completed nothing has rate 0 and the spacing starts (or ends) there
        // (seed 003's IB sweep: synchronous 0, then constant@0.93 … 7.46 = k/8 of the
        // throughput rate). GuideLLM gives up only when neither completed anything, and stops
        // at the first rate at or below 0.
        auto measured = [&](size_t k) {
          const double r =
              done.size() >= 2 ? report::figure(done[k], "request_throughput").value_or(0) : 0;
          return r > 0 && std::isfinite(r) ? r : 0.0;
        };
        const double sync = measured(0), thr = measured(1);
        if (sync <= 0 && thr <= 0) {
          std::fprintf(stderr,
                       "servebench: sweep: neither the synchronous nor the throughput benchmark "
                       "completed a request, so there is no rate to run; the sweep ends here\n");
          return std::nullopt;
        }
        sweep_rates_ = sweep_rates(sync, thr, L.sweep_size);
      }
      if (!(sweep_rates_.at(i - 2) > 0)) {
        std::fprintf(stderr,
                     "servebench: sweep: the throughput benchmark completed no requests, so the "
                     "constant rates fell from the synchronous rate to 0; the sweep ends at 0\n");
        return std::nullopt;
      }
      set_benchmark(point, LoadProfile::kConstant, sweep_rates_.at(i - 2), base_.max_concurrency);
      break;
    }
  }
  point.limits.sequence = index_++;
  return point;
}

}  // namespace servebench::run
