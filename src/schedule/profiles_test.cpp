#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

TEST(ConstantTimes, EvenSpacingFromStartUntilTheDuration) {
  const auto t = constant_times_ns(4.0, 2.0, 1000);
  // 0, 0.25, …, 1.75 s: rate × duration requests, the last one before the bound.
  ASSERT_EQ(t.size(), 8u);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], static_cast<int64_t>(i) * 250'000'000);
}

TEST(ConstantTimes, CountCapsBeforeTheDurationAndNoDurationMeansCountOnly) {
  EXPECT_EQ(constant_times_ns(10.0, 5.0, 7).size(), 7u);
  const auto t = constant_times_ns(2.0, 0, 5);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t.back(), 2'000'000'000);
}

TEST(ConstantTimes, FractionalRateKeepsOnlyTimesInsideTheWindow) {
  // 0.3 req/s over 9.5 s: 0, 3.33, 6.67 (10 s is past the bound).
  const auto t = constant_times_ns(0.3, 9.5, 100);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1], 3'333'333'333);
  EXPECT_EQ(requests_within(0.3, 10.0), 3u);  // 3.0000000000000004 is 3
}

TEST(PoissonTimes, SeededStartsAtZeroSortedInsideTheWindowWithTheRightMeanGap) {
  const auto t = poisson_times_ns(50.0, 20.0, 100'000, 7);
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.front(), 0);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_LT(t.back(), 20'000'000'000);
  // 1000 arrivals expected; a Poisson count has sd ~32, so ±150 cannot fail by chance.
  EXPECT_NEAR(static_cast<double>(t.size()), 1000.0, 150.0);
  EXPECT_EQ(t, poisson_times_ns(50.0, 20.0, 100'000, 7));
  EXPECT_NE(t, poisson_times_ns(50.0, 20.0, 100'000, 8));
  EXPECT_EQ(poisson_times_ns(50.0, 20.0, 10, 7).size(), 10u);
}

TEST(RequestsWithin, RateTimesDurationRoundedUp) {
  EXPECT_EQ(requests_within(4.0, 2.0), 8u);
  EXPECT_EQ(requests_within(2.5, 3.0), 8u);  // 7.5 -> 8
  EXPECT_EQ(requests_within(0.01, 1.0), 1u);
}

TEST(RateProfiles, BadRatesAreUsageErrorsNamingTheFlag) {
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    try {
      constant_times_ns(bad, 1.0, 10);
      FAIL() << bad;
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find("--rate"), std::string::npos) << e.what();
    }
    EXPECT_THROW(poisson_times_ns(bad, 1.0, 10, 0), core::Error);
  }
}

}  // namespace
}  // namespace servebench::schedule
