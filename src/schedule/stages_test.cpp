#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

TEST(StageCount, IsRateTimesDurationTruncated) {
  EXPECT_EQ(stage_request_count({1, 60}), 60u);
  EXPECT_EQ(stage_request_count({2.5, 3}), 7u);  // int(7.5)
  EXPECT_EQ(stage_request_count({0.5, 3}), 1u);
  EXPECT_THROW(stage_request_count({0.1, 5}), core::Error);  // int(0.5) = 0 requests
  EXPECT_THROW(stage_request_count({0, 5}), core::Error);
  EXPECT_THROW(stage_request_count({-1, 5}), core::Error);
  EXPECT_THROW(stage_request_count({1, 0}), core::Error);
  EXPECT_THROW(stage_request_count({1e12, 1e3}), core::Error);
}

TEST(StageTimes, ConstantEndsExactlyAtTheDuration) {
  const auto t = stage_times_ns({10, 3}, StageArrival::kConstant, 7);
  ASSERT_EQ(t.size(), 30u);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_GT(t.front(), 0);
  EXPECT_EQ(t.back(), 3'000'000'000);
}

TEST(StageTimes, PoissonSendsTheCountInOneSecondWindows) {
  const auto t = stage_times_ns({20, 4}, StageArrival::kPoisson, 3);
  ASSERT_EQ(t.size(), 80u);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_GT(t.front(), 0);
  // Every window's last request lands on its second's end, so the times never pass a whole
  // second more than the windows needed; with 80 requests at ~20/s that is a handful.
  EXPECT_LT(t.back(), 12'000'000'000);
  // Whole seconds are window ends: at least one request sits exactly on one.
  EXPECT_TRUE(std::any_of(t.begin(), t.end(), [](int64_t v) { return v % 1'000'000'000 == 0; }));
}

TEST(StageTimes, SeededAndDifferentPerSeed) {
  for (StageArrival a : {StageArrival::kConstant, StageArrival::kPoisson}) {
    EXPECT_EQ(stage_times_ns({5, 4}, a, 1), stage_times_ns({5, 4}, a, 1));
    EXPECT_NE(stage_times_ns({5, 4}, a, 1), stage_times_ns({5, 4}, a, 2));
  }
}

TEST(StageTimes, BadStageIsAUsageError) {
  try {
    stage_times_ns({1, -2}, StageArrival::kConstant, 0);
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "--stages");
  }
}

}  // namespace
}  // namespace servebench::schedule
