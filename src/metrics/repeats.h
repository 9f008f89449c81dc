// File: metrics/repeats.h
// Statistics across repeated runs of one point (`run --num-runs N`): each figure's mean, sample
// standard deviation (N-1) and a confidence interval for the mean from Student's t with N-1
// degrees of freedom; and Welch's t test between two sets of runs, as `compare` uses it.
// Pure computation; docs/metrics.md "Repeated runs" gives the method.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace servebench::metrics {

// One figure across n runs. With n == 1 sd is 0 and the interval is the value itself
// (no spread can be estimated from one run).
struct RepeatStats {
  double mean = 0, sd = 0;  // sd: sample standard deviation (divides by n - 1)
  double ci_low = 0, ci_high = 0;
  double t_critical = 0;  // Student's t quantile used (0 when n < 2)
  size_t n = 0;
};

// The two-sided quantile of Student's t: the t with P(|T| <= t) = `confidence` for `dof`
// degrees of freedom (12.706 for 0.95 and 1 dof). Throws core::Error for dof <= 0 or a
// confidence outside (0, 1).
double students_t_critical(double confidence, double dof);

// Mean, sd and the `confidence` interval of `values` (n >= 1; an empty span gives n = 0).
RepeatStats repeat_stats(std::span<const double> values, double confidence = 0.95);

// Welch's unequal-variances t test of two means given as (mean, sd, n): the statistic, its
// Welch–Satterthwaite degrees of freedom and the two-sided p value. nullopt when either side has
// fewer than 2 runs, or both have no spread (the test is undefined).
struct WelchTest {
  double t = 0, dof = 0, p_value = 1;
};
std::optional<WelchTest> welch_t_test(const RepeatStats& a, const RepeatStats& b);

}  // namespace servebench::metrics
