// Statistics across repeated runs: Student's t intervals and Welch's t test, with the t
// distribution's quantile and CDF from Boost.Math (boost::math::students_t).
#include "metrics/repeats.h"

#include <cmath>
#include <string>

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include "core/error.h"

namespace servebench::metrics {

double students_t_critical(double confidence, double dof) {
  if (!(dof > 0) || !std::isfinite(dof))
    throw core::Error(core::ErrorKind::kInput, "students_t_critical",
                      fmt::format("degrees of freedom must be positive, got {}", dof));
  if (!(confidence > 0 && confidence < 1))
    throw core::Error(core::ErrorKind::kInput, "students_t_critical",
                      fmt::format("confidence must be in (0, 1), got {}", confidence));
  const boost::math::students_t dist(dof);
  return boost::math::quantile(boost::math::complement(dist, (1 - confidence) / 2));
}

RepeatStats repeat_stats(std::span<const double> values, double confidence) {
  RepeatStats s;
  s.n = values.size();
  if (s.n == 0) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  s.ci_low = s.ci_high = s.mean;
  if (s.n < 2) return s;
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.sd = std::sqrt(squares / static_cast<double>(s.n - 1));
  s.t_critical = students_t_critical(confidence, static_cast<double>(s.n - 1));
  const double half = s.t_critical * s.sd / std::sqrt(static_cast<double>(s.n));
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

std::optional<WelchTest> welch_t_test(const RepeatStats& a, const RepeatStats& b) {
  if (a.n < 2 || b.n < 2) return std::nullopt;
  const double va = a.sd * a.sd / static_cast<double>(a.n);
  const double vb = b.sd * b.sd / static_cast<double>(b.n);
  const double se2 = va + vb;
  if (!(se2 > 0) || !std::isfinite(se2)) return std::nullopt;
  WelchTest w;
  w.t = (b.mean - a.mean) / std::sqrt(se2);
  w.dof =
      se2 * se2 / (va * va / static_cast<double>(a.n - 1) + vb * vb / static_cast<double>(b.n - 1));
  const boost::math::students_t dist(w.dof);
  w.p_value = 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(w.t)));
  return w;
}

}  // namespace servebench::metrics
