// Statistics across repeated runs against values worked out by hand and Student's t tables.
#include "metrics/repeats.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace servebench::metrics {
namespace {

TEST(StudentsT, MatchesTheTwoSidedTableAt95Percent) {
  // Any statistics table, two-sided 0.05 (0.975 one-sided) column.
  EXPECT_NEAR(students_t_critical(0.95, 1), 12.706, 5e-4);
  EXPECT_NEAR(students_t_critical(0.95, 2), 4.303, 5e-4);
  EXPECT_NEAR(students_t_critical(0.95, 4), 2.776, 5e-4);
  EXPECT_NEAR(students_t_critical(0.95, 9), 2.262, 5e-4);
  EXPECT_NEAR(students_t_critical(0.99, 4), 4.604, 5e-4);
  // 1 dof is the Cauchy distribution: tan(pi/2 * confidence) exactly.
  EXPECT_NEAR(students_t_critical(0.95, 1), std::tan(M_PI / 2 * 0.95), 1e-9);
}

TEST(StudentsT, RefusesImpossibleArguments) {
  EXPECT_THROW(students_t_critical(0.95, 0), core::Error);
  EXPECT_THROW(students_t_critical(1.0, 3), core::Error);
  EXPECT_THROW(students_t_critical(0.0, 3), core::Error);
}

TEST(RepeatStats, MeanSampleSdAndTInterval) {
  // 1..5: mean 3, sum of squares 10, sd = sqrt(10 / 4); half width = t(4) * sd / sqrt(5).
  const std::vector<double> v = {1, 2, 3, 4, 5};
  const RepeatStats s = repeat_stats(v);
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_NEAR(s.sd, 1.5811388300841898, 1e-12);
  const double half = 2.7764451051977987 * 1.5811388300841898 / std::sqrt(5.0);  // 1.96324…
  EXPECT_NEAR(s.ci_low, 3 - half, 1e-9);
  EXPECT_NEAR(s.ci_high, 3 + half, 1e-9);
  EXPECT_NEAR(s.ci_high - s.mean, 1.9632, 1e-4);
  EXPECT_NEAR(s.t_critical, 2.7764451051977987, 1e-9);
}

TEST(RepeatStats, ThreeRuns) {
  // 10, 12, 17: mean 13, squares 9 + 1 + 16 = 26, sd = sqrt(13) = 3.60555;
  // t(2) = 4.302653, half = 4.302653 * 3.60555 / sqrt(3) = 8.95663.
  const std::vector<double> v = {10, 12, 17};
  const RepeatStats s = repeat_stats(v);
  EXPECT_DOUBLE_EQ(s.mean, 13.0);
  EXPECT_NEAR(s.sd, std::sqrt(13.0), 1e-12);
  EXPECT_NEAR(s.ci_low, 13 - 8.95663, 1e-4);
  EXPECT_NEAR(s.ci_high, 13 + 8.95663, 1e-4);
}

TEST(RepeatStats, OneRunHasNoSpreadAndNoneIsEmpty) {
  const std::vector<double> one = {7.5};
  const RepeatStats s = repeat_stats(one);
  EXPECT_EQ(s.n, 1u);
  EXPECT_DOUBLE_EQ(s.mean, 7.5);
  EXPECT_DOUBLE_EQ(s.sd, 0);
  EXPECT_DOUBLE_EQ(s.ci_low, 7.5);
  EXPECT_DOUBLE_EQ(s.ci_high, 7.5);
  EXPECT_EQ(repeat_stats(std::vector<double>{}).n, 0u);
}

TEST(WelchTest, TwoDegreesOfFreedomHasAClosedForm) {
  // Two runs a side, sd 1 each: se^2 = 1/2 + 1/2, t = 2, Welch dof = 1 / (1/4 + 1/4) = 2, and
  // t with 2 dof has P(|T| > t) = 1 - t / sqrt(2 + t^2) = 1 - 2 / sqrt(6).
  const RepeatStats a{.mean = 0, .sd = 1, .n = 2}, b{.mean = 2, .sd = 1, .n = 2};
  const auto w = welch_t_test(a, b);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->t, 2.0, 1e-12);
  EXPECT_NEAR(w->dof, 2.0, 1e-12);
  EXPECT_NEAR(w->p_value, 1 - 2 / std::sqrt(6.0), 1e-9);
}

TEST(WelchTest, AtTheTableValueThePValueIsFivePercent) {
  // Five runs a side, sd 1: dof = 0.16 / (2 * 0.04 / 4) = 8; the table's t(8) = 2.306004 at
  // p = 0.05, so a difference of 2.306004 * sqrt(0.4) sits on the line.
  const double d = 2.306004 * std::sqrt(0.4);
  const RepeatStats a{.mean = 100, .sd = 1, .n = 5}, b{.mean = 100 + d, .sd = 1, .n = 5};
  const auto w = welch_t_test(a, b);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->dof, 8.0, 1e-9);
  EXPECT_NEAR(w->p_value, 0.05, 1e-5);
}

TEST(WelchTest, UndefinedWithoutSpreadOrWithOneRun) {
  const RepeatStats flat{.mean = 5, .sd = 0, .n = 3}, one{.mean = 5, .sd = 1, .n = 1};
  EXPECT_FALSE(welch_t_test(flat, flat).has_value());
  EXPECT_FALSE(welch_t_test(one, flat).has_value());
}

}  // namespace
}  // namespace servebench::metrics
