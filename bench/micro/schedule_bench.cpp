// File: bench/micro/schedule_bench.cpp
// schedule::arrival_times_ns: planning 100k intended send times (Poisson, bursty gamma,
// constant), done once before a run starts.
#include <benchmark/benchmark.h>

#include <limits>

#include "schedule/schedule.h"

namespace {

void BM_ArrivalTimes(benchmark::State& state, double burstiness) {
  const size_t n = static_cast<size_t>(state.range(0));
  servebench::schedule::ArrivalOptions options;
  options.request_rate = 10'000;
  options.burstiness = burstiness;
  options.seed = 7;
  for (auto _ : state) {
    auto times = servebench::schedule::arrival_times_ns(n, options);
    benchmark::DoNotOptimize(times.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

BENCHMARK_CAPTURE(BM_ArrivalTimes, poisson, 1.0)->Arg(100'000);
BENCHMARK_CAPTURE(BM_ArrivalTimes, gamma_0_5, 0.5)->Arg(100'000);
BENCHMARK_CAPTURE(BM_ArrivalTimes, constant, std::numeric_limits<double>::infinity())->Arg(100'000);

}  // namespace
