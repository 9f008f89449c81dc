#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

TEST(Arrivals, InfiniteRateSendsEverythingAtStart) {
  auto t = arrival_times_ns(5, {});
  EXPECT_EQ(t, std::vector<int64_t>(5, 0));
}

TEST(Arrivals, LastArrivalLandsAtCountOverRate) {
  ArrivalOptions o{.request_rate = 4.0, .burstiness = 1.0, .seed = 7};
  auto t = arrival_times_ns(200, o);
  ASSERT_EQ(t.size(), 200u);
  EXPECT_EQ(t.back(), 50'000'000'000);  // 200 / 4 = 50 s
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_GT(t.front(), 0);
}

TEST(Arrivals, SameSeedSameTimesOtherSeedOtherTimes) {
  ArrivalOptions o{.request_rate = 10.0, .burstiness = 0.5, .seed = 1};
  EXPECT_EQ(arrival_times_ns(100, o), arrival_times_ns(100, o));
  ArrivalOptions other = o;
  other.seed = 2;
  EXPECT_NE(arrival_times_ns(100, o), arrival_times_ns(100, other));
}

TEST(Arrivals, InfiniteBurstinessIsEvenlySpaced) {
  ArrivalOptions o{.request_rate = 1000.0, .burstiness = INFINITY, .seed = 0};
  auto t = arrival_times_ns(4, o);
  EXPECT_EQ(t, (std::vector<int64_t>{1'000'000, 2'000'000, 3'000'000, 4'000'000}));
}

TEST(Arrivals, PoissonGapsHaveUnitCoefficientOfVariation) {
  ArrivalOptions o{.request_rate = 100.0, .burstiness = 1.0, .seed = 3};
  auto t = arrival_times_ns(20000, o);
  double sum = 0, sum2 = 0;
  for (size_t i = 1; i < t.size(); ++i) {
    double g = static_cast<double>(t[i] - t[i - 1]);
    sum += g;
    sum2 += g * g;
  }
  double n = static_cast<double>(t.size() - 1);
  double mean = sum / n;
  double cv = std::sqrt(sum2 / n - mean * mean) / mean;
  EXPECT_NEAR(cv, 1.0, 0.05);
  EXPECT_NEAR(mean, 1e7, 2e5);  // 10 ms
}

TEST(Arrivals, RejectsBadRateAndBurstiness) {
  EXPECT_THROW(arrival_times_ns(1, {.request_rate = 0}), core::Error);
  EXPECT_THROW(arrival_times_ns(1, {.request_rate = -1}), core::Error);
  EXPECT_THROW(arrival_times_ns(1, {.request_rate = NAN}), core::Error);
  EXPECT_THROW(arrival_times_ns(1, {.request_rate = 1, .burstiness = 0}), core::Error);
}

TEST(TraceTimes, OffsetsAreScaledByTheTimeScale) {
  const std::vector<int64_t> offsets = {0, 1'000'000, 2'500'000'000, 604'800'000'000'123};
  EXPECT_EQ(trace_times_ns(offsets, 1.0), offsets);
  EXPECT_EQ(trace_times_ns(offsets, 2.0),
            (std::vector<int64_t>{0, 2'000'000, 5'000'000'000, 1'209'600'000'000'246}));
  EXPECT_EQ(trace_times_ns(offsets, 0.5),
            (std::vector<int64_t>{0, 500'000, 1'250'000'000, 302'400'000'000'062}));
  EXPECT_TRUE(trace_times_ns({}, 3.0).empty());
}

TEST(TraceTimes, RejectsBadScaleAndNegativeOffsets) {
  for (double bad : {0.0, -1.0, static_cast<double>(NAN), static_cast<double>(INFINITY)}) {
    try {
      trace_times_ns({0}, bad);
      ADD_FAILURE() << "no error for " << bad;
    } catch (const core::Error& e) {
      EXPECT_EQ(e.where(), "--trace-time-scale");
    }
  }
  EXPECT_THROW(trace_times_ns({5, -1}, 1.0), core::Error);
}

}  // namespace
}  // namespace servebench::schedule
