// The points of a run (sequence.cpp): GuideLLM's profiles as benchmarks, a sweep's rates from
// its first two results; and the plan of a time-bounded point (send_times.cpp).
#include "run/sequence.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "run/send_times.h"

namespace servebench::run {
namespace {

// A spec as the load flags leave it for a profile (load_flags.cpp), on vLLM's defaults.
Spec profiled(LoadProfile profile, std::vector<double> rates) {
  Spec c;
  c.dataset.name = "random";
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.request_rate = c.request_rates.front();
  c.max_concurrencies = {0};
  c.limits.profile = profile;
  c.limits.rates = std::move(rates);
  c.limits.max_requests = static_cast<size_t>(c.num_prompts);
  return c;
}

report::RunResult result_with_rate(double rate) {
  report::RunResult r;
  r.result = {{"request_throughput", rate}};
  return r;
}

TEST(Sequence, ProfileAndRateBecomeTheBenchmarks) {
  Spec c = profiled(LoadProfile::kConcurrent, {1, 4});
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto first = seq.next(done);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->limits.benchmark, "concurrent@1");
  EXPECT_EQ(first->max_concurrency, 1);
  EXPECT_TRUE(std::isinf(first->request_rate));
  auto second = seq.next(done);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->limits.benchmark, "concurrent@4");
  EXPECT_EQ(second->limits.sequence, 1u);
  EXPECT_FALSE(seq.next(done));
}

TEST(Sweep, SynchronousThenThroughputThenLinspacedConstantRates) {
  Spec c = profiled(LoadProfile::kSweep, {6});
  c.limits.sweep_size = 6;
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto sync = seq.next(done);
  ASSERT_TRUE(sync);
  EXPECT_EQ(sync->limits.benchmark, "synchronous");
  EXPECT_EQ(sync->max_concurrency, 1);
  done.push_back(result_with_rate(1.0));
  auto thr = seq.next(done);
  ASSERT_TRUE(thr);
  EXPECT_EQ(thr->limits.benchmark, "throughput");
  EXPECT_EQ(thr->max_concurrency, 512);  // GuideLLM's default cap
  done.push_back(result_with_rate(9.0));
  // np.linspace(1, 9, 5)[1:] = 3, 5, 7, 9: the last constant rate is the throughput rate.
  std::vector<double> rates;
  for (auto next = seq.next(done); next; next = seq.next(done)) {
    EXPECT_EQ(next->limits.strategy, LoadProfile::kConstant);
    EXPECT_TRUE(std::isinf(next->burstiness));
    rates.push_back(next->request_rate);
    done.push_back(result_with_rate(next->request_rate));
  }
  EXPECT_EQ(rates, (std::vector<double>{3, 5, 7, 9}));
  EXPECT_EQ(done.size(), 6u);
}

TEST(Sweep, EndsAfterTwoBenchmarksWhenNothingCompleted) {
  Spec c = profiled(LoadProfile::kSweep, {});
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(0.0));
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(0.0));
  EXPECT_FALSE(seq.next(done));
}

// GuideLLM spaces the rates from the synchronous rate down to a throughput rate of 0 and stops at
// the first rate at or below 0: np.linspace(2, 0, 5)[1:] = 1.5, 1, 0.5, then 0 ends it.
TEST(Sweep, FallsToZeroWhenThroughputCompletedNothing) {
  Spec c = profiled(LoadProfile::kSweep, {6});
  c.limits.sweep_size = 6;
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(2.0));
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(0.0));
  std::vector<double> rates;
  for (auto next = seq.next(done); next; next = seq.next(done)) {
    rates.push_back(next->request_rate);
    done.push_back(result_with_rate(0.0));
  }
  EXPECT_EQ(rates, (std::vector<double>{1.5, 1.0, 0.5}));
}

// Seed 003's IB sweep: the synchronous benchmark completed nothing in its 30 s, the throughput
// benchmark 7.46 req/s (7.463 unrounded fits every printed rate), and GuideLLM went on with
// np.linspace(0, 7.463, 9)[1:]: constant@0.93, 1.87, 2.80, 3.73, 4.66, 5.60, 6.53, 7.46.
TEST(Sweep, GoesOnFromZeroWhenSynchronousCompletedNothing) {
  Spec c = profiled(LoadProfile::kSweep, {});
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(0.0));
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(7.463));
  std::vector<std::string> names;
  std::vector<double> rates;
  for (auto next = seq.next(done); next; next = seq.next(done)) {
    names.push_back(next->limits.benchmark);
    rates.push_back(next->request_rate);
    done.push_back(result_with_rate(0.0));  // nothing completes at the high rates either
  }
  EXPECT_EQ(names, (std::vector<std::string>{"constant@0.93", "constant@1.87", "constant@2.80",
                                             "constant@3.73", "constant@4.66", "constant@5.60",
                                             "constant@6.53", "constant@7.46"}));
  ASSERT_EQ(rates.size(), 8u);
  for (size_t k = 0; k < rates.size(); ++k) EXPECT_DOUBLE_EQ(rates[k], 7.463 * (k + 1) / 8);
  EXPECT_EQ(done.size(), 10u);  // GuideLLM's sweep size
}

TEST(BoundedPlan, ConstantRateOverADurationCyclesThePrompts) {
  Spec c = profiled(LoadProfile::kConstant, {4});
  c.limits.duration_s = 2;
  c.num_prompts = 8;  // rate × duration (load_flags.cpp)
  c.limits.max_requests = 8;
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  Spec point = *seq.next(done);
  std::vector<dataset::Prompt> prompts(3);
  for (int i = 0; i < 3; ++i) prompts[i].text = "p" + std::to_string(i);
  auto plan = bounded_plan(point, prompts);
  ASSERT_EQ(plan.size(), 8u);  // 4 req/s × 2 s, due at 0, 0.25, …, 1.75 s
  EXPECT_EQ(plan[7].intended_ns, 1'750'000'000);
  EXPECT_EQ(plan[4].prompt, "p1");  // 4 % 3
  EXPECT_EQ(plan[7].index, 7u);
}

TEST(BoundedPlan, ConcurrencyProfilesPlanTheCapAllDueAtStart) {
  Spec c = profiled(LoadProfile::kSynchronous, {});
  c.limits.duration_s = 5;
  c.num_prompts = 20;
  c.limits.max_requests = 20;
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto plan = bounded_plan(*seq.next(done), std::vector<dataset::Prompt>(4));
  ASSERT_EQ(plan.size(), 20u);
  for (const auto& p : plan) EXPECT_EQ(p.intended_ns, 0);
}

}  // namespace
}  // namespace servebench::run
