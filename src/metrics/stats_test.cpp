// numpy-compatible statistics, checked against values computed by hand with numpy's rules:
// percentile index = (n - 1) * p / 100, linear between neighbours; median = middle or mean of
// the two middle values; std = population (ddof = 0).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/error.h"
#include "metrics/metrics.h"

namespace servebench::metrics {
namespace {

TEST(PercentileLinear, MatchesNumpyOnFourUnsortedSamples) {
  const std::vector<double> x = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile_linear(x, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile_linear(x, 25), 1.75);       // index 0.75
  EXPECT_DOUBLE_EQ(percentile_linear(x, 50), 2.5);        // index 1.5
  EXPECT_NEAR(percentile_linear(x, 99.9), 3.997, 1e-12);  // index 2.997
  EXPECT_DOUBLE_EQ(percentile_linear(x, 100), 4.0);
}

TEST(PercentileLinear, MatchesNumpyOnFiveSamples) {
  const std::vector<double> x = {50, 10, 40, 20, 30};
  EXPECT_DOUBLE_EQ(percentile_linear(x, 10), 14.0);    // index 0.4
  EXPECT_DOUBLE_EQ(percentile_linear(x, 90), 46.0);    // index 3.6
  EXPECT_NEAR(percentile_linear(x, 99), 49.6, 1e-12);  // index 3.96
  EXPECT_DOUBLE_EQ(percentile_linear(x, 75), 40.0);    // index 3 exactly
}

TEST(PercentileLinear, EmptyIsZeroAndSingleIsItself) {
  EXPECT_EQ(percentile_linear({}, 99), 0.0);
  EXPECT_EQ(percentile_linear({7.5}, 0), 7.5);
  EXPECT_EQ(percentile_linear({7.5}, 99.9), 7.5);
}

TEST(PercentileLinear, RejectsPercentilesOutsideRange) {
  EXPECT_THROW(percentile_linear({1, 2}, -0.1), core::Error);
  EXPECT_THROW(percentile_linear({1, 2}, 100.01), core::Error);
  EXPECT_THROW(percentile_linear({1, 2}, NAN), core::Error);
}

TEST(Summarize, MeanMedianPopulationStdMinMax) {
  Distribution d = summarize({4, 1, 3, 2}, {50, 99});
  EXPECT_EQ(d.count, 4u);
  EXPECT_DOUBLE_EQ(d.mean, 2.5);
  EXPECT_DOUBLE_EQ(d.median, 2.5);
  EXPECT_DOUBLE_EQ(d.std, std::sqrt(1.25));  // population: sum of squares 5 over 4
  EXPECT_EQ(d.min, 1.0);
  EXPECT_EQ(d.max, 4.0);
  ASSERT_EQ(d.percentiles.size(), 2u);
  EXPECT_EQ(d.percentiles[0].first, 50.0);
  EXPECT_DOUBLE_EQ(d.percentiles[0].second, 2.5);
  EXPECT_EQ(d.percentiles[1].first, 99.0);
  EXPECT_NEAR(d.percentiles[1].second, 3.97, 1e-12);  // index 2.97
}

TEST(Summarize, OddCountMedianIsMiddle) {
  Distribution d = summarize({9, 1, 5}, {});
  EXPECT_EQ(d.median, 5.0);
  EXPECT_DOUBLE_EQ(d.std, std::sqrt(32.0 / 3.0));
  EXPECT_TRUE(d.percentiles.empty());
}

TEST(Summarize, NoSamplesGivesZerosAndEveryPercentile) {
  Distribution d = summarize({}, {50, 99.9});
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.mean, 0.0);
  EXPECT_EQ(d.median, 0.0);
  EXPECT_EQ(d.std, 0.0);
  ASSERT_EQ(d.percentiles.size(), 2u);
  EXPECT_EQ(d.percentiles[1].first, 99.9);
  EXPECT_EQ(d.percentiles[1].second, 0.0);
}

// Reference: numpy's rules on a fully sorted copy, to check the selection-based implementation
// on many sizes, with ties, and in any input order.
double reference_percentile(std::vector<double> x, double p) {
  std::sort(x.begin(), x.end());
  const double vi = static_cast<double>(x.size() - 1) * (p / 100.0);
  if (vi >= static_cast<double>(x.size() - 1)) return x.back();
  const auto i = static_cast<size_t>(std::floor(vi));
  const double t = vi - std::floor(vi);
  const double diff = x[i + 1] - x[i];
  return t >= 0.5 ? x[i + 1] - diff * (1 - t) : x[i] + diff * t;
}

TEST(Summarize, SelectionAgreesWithFullSortOnRandomSamples) {
  std::mt19937_64 rng(42);
  const std::vector<double> ps = {0, 1, 25, 50, 90, 99, 99.9, 100};
  for (size_t n : {1u, 2u, 3u, 4u, 5u, 10u, 101u, 1000u, 4097u}) {
    for (int round = 0; round < 5; ++round) {
      std::vector<double> x(n);
      for (double& v : x) v = static_cast<double>(rng() % 50) / 4.0;  // many ties
      Distribution d = summarize(x, ps);
      std::vector<double> sorted = x;
      std::sort(sorted.begin(), sorted.end());
      const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
      ASSERT_EQ(d.median, median) << n;
      ASSERT_EQ(d.min, sorted.front());
      ASSERT_EQ(d.max, sorted.back());
      for (size_t k = 0; k < ps.size(); ++k) {
        ASSERT_EQ(d.percentiles[k].second, reference_percentile(x, ps[k])) << n << " p" << ps[k];
        ASSERT_EQ(percentile_linear(x, ps[k]), reference_percentile(x, ps[k]));
      }
    }
  }
}

TEST(PercentileWord, FollowsPythonStrOfFloat) {
  EXPECT_EQ(percentile_word(99), "99");
  EXPECT_EQ(percentile_word(99.9), "99.9");
  EXPECT_EQ(percentile_word(0), "0");
  EXPECT_EQ(percentile_word(50.0), "50");
  EXPECT_EQ(percentile_word(0.1), "0.1");
  EXPECT_EQ(percentile_word(99.99), "99.99");
  EXPECT_EQ(percentile_word(100), "100");
}

TEST(ParseGoodput, AcceptsVllmPairs) {
  auto slo = parse_goodput({"ttft:100", "tpot:12.5", "e2el:2000"});
  ASSERT_EQ(slo.size(), 3u);
  EXPECT_EQ(slo["ttft"], 100.0);
  EXPECT_EQ(slo["tpot"], 12.5);
  EXPECT_EQ(slo["e2el"], 2000.0);
}

TEST(ParseGoodput, RejectsBadPairsNamingTheInput) {
  for (const char* bad : {"itl:5", "ttft", "ttft:", "ttft:abc", "ttft:-1", "ttft:1:2"}) {
    try {
      parse_goodput({bad});
      FAIL() << bad;
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(ParsePercentiles, CommaSeparatedInRange) {
  EXPECT_EQ(parse_percentiles("99"), (std::vector<double>{99}));
  EXPECT_EQ(parse_percentiles("25,50,99.9"), (std::vector<double>{25, 50, 99.9}));
  EXPECT_THROW(parse_percentiles("50,101"), core::Error);
  EXPECT_THROW(parse_percentiles("5x"), core::Error);
  EXPECT_THROW(parse_percentiles(""), core::Error);
  EXPECT_THROW(parse_percentiles("50,,99"), core::Error);
}

}  // namespace
}  // namespace servebench::metrics
