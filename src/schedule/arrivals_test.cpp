#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/numpy_random.h"
#include "schedule/schedule.h"

namespace servebench::schedule {
namespace {

// The lines of tests/testdata/numpy_expectations.txt (scripts/gen-numpy-expectations.py, from
// Debian's python3-numpy) named `name`: args, then '|', then vLLM's cumulative delays (hex).
struct VllmCase {
  std::vector<std::string> args;
  std::vector<int64_t> times_ns;  // llround(delay_s * 1e9), as arrival_times_ns rounds
};
std::vector<VllmCase> vllm_cases(const std::string& name) {
  std::ifstream in(SERVEBENCH_SOURCE_DIR "/tests/testdata/numpy_expectations.txt");
  std::vector<VllmCase> cases;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    if (!(words >> word) || word != name) continue;
    VllmCase c;
    while (words >> word && word != "|") c.args.push_back(word);
    while (words >> word)
      c.times_ns.push_back(std::llround(std::strtod(word.c_str(), nullptr) * 1e9));
    cases.push_back(std::move(c));
  }
  EXPECT_FALSE(cases.empty()) << "no " << name << " case in tests/testdata/numpy_expectations.txt";
  return cases;
}
double hex_arg(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}

TEST(Arrivals, SameTimesAsVllmsNumpyGammaDrawsForTheSameSeed) {
  for (const VllmCase& c : vllm_cases("arrivals")) {
    ArrivalOptions o{.request_rate = hex_arg(c.args[2]),
                     .burstiness = hex_arg(c.args[3]),
                     .seed = std::stoull(c.args[0])};
    EXPECT_EQ(arrival_times_ns(std::stoull(c.args[1]), o), c.times_ns)
        << "seed " << c.args[0] << " n " << c.args[1] << " rate " << o.request_rate
        << " burstiness " << o.burstiness;
  }
}

TEST(RampUpArrivals, SameTimesAsVllmsNumpyGammaDrawsForTheSameSeed) {
  for (const VllmCase& c : vllm_cases("ramp_up")) {
    ArrivalOptions o{.burstiness = hex_arg(c.args[5]), .seed = std::stoull(c.args[0])};
    o.ramp_up = RampUp{.strategy = c.args[2] == "exponential" ? RampUpStrategy::kExponential
                                                              : RampUpStrategy::kLinear,
                       .start_rps = std::stoll(c.args[3]),
                       .end_rps = std::stoll(c.args[4])};
    EXPECT_EQ(arrival_times_ns(std::stoull(c.args[1]), o), c.times_ns)
        << "seed " << c.args[0] << " " << c.args[2];
  }
}

TEST(Arrivals, ContinueVllmsStreamAfterTheDatasetsDrawsFromIt) {
  // vLLM's prefix_repetition reseeds np.random and draws its token ids with np.random.randint
  // before the arrivals draw from the same generator: prefix, then its suffixes, per prefix.
  for (const VllmCase& c : vllm_cases("prefix_repetition_arrivals")) {
    const uint64_t seed = std::stoull(c.args[0]);
    const int prefix_len = std::stoi(c.args[1]), suffix_len = std::stoi(c.args[2]);
    const int prefixes = std::stoi(c.args[3]), per_prefix = std::stoi(c.args[4]);
    core::NumpyRandomState dataset(static_cast<uint32_t>(seed));
    for (int g = 0; g < prefixes; ++g) {
      for (int k = 0; k < prefix_len; ++k) dataset.randint(0, 32000);
      for (int p = 0; p < per_prefix * suffix_len; ++p) dataset.randint(0, 32000);
    }
    ArrivalOptions o{.request_rate = hex_arg(c.args[6]),
                     .burstiness = hex_arg(c.args[7]),
                     .seed = seed,
                     .numpy_words_before = dataset.words_drawn()};
    EXPECT_EQ(arrival_times_ns(std::stoull(c.args[5]), o), c.times_ns) << "seed " << seed;
    o.numpy_words_before = 0;
    EXPECT_NE(arrival_times_ns(std::stoull(c.args[5]), o), c.times_ns) << "seed " << seed;
  }
}

TEST(Arrivals, RefusesASeedNumpyRefuses) {
  ArrivalOptions o{.request_rate = 2.0, .seed = uint64_t{1} << 32};
  try {
    arrival_times_ns(3, o);
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.where(), "--seed");
  }
  o.seed = UINT32_MAX;
  EXPECT_EQ(arrival_times_ns(3, o).size(), 3u);
}

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

TEST(RampUpRate, LinearAndExponentialByHand) {
  const RampUp linear{.strategy = RampUpStrategy::kLinear, .start_rps = 20, .end_rps = 200};
  EXPECT_EQ(ramp_up_rate(linear, 0, 40), 20.0);
  EXPECT_EQ(ramp_up_rate(linear, 13, 40), 80.0);  // 20 + 180 * 13/39
  EXPECT_EQ(ramp_up_rate(linear, 39, 40), 200.0);
  const RampUp exponential{.strategy = RampUpStrategy::kExponential, .start_rps = 2, .end_rps = 32};
  for (size_t i = 0; i < 5; ++i)  // 2 * 16^(i/4): doubling at every quarter
    EXPECT_EQ(ramp_up_rate(exponential, i, 5), 2.0 * std::pow(2.0, static_cast<double>(i))) << i;
  // One request: progress 0 (vLLM divides by max(n - 1, 1)), so the start rate.
  EXPECT_EQ(ramp_up_rate(linear, 0, 1), 20.0);
  EXPECT_EQ(ramp_up_rate(exponential, 0, 1), 2.0);
  EXPECT_STREQ(ramp_up_strategy_name(RampUpStrategy::kExponential), "exponential");
  EXPECT_STREQ(ramp_up_strategy_name(RampUpStrategy::kLinear), "linear");
}

TEST(RampUpArrivals, ConstantGapsAreOneOverEachRequestsRateNotRescaled) {
  ArrivalOptions o;
  o.burstiness = INFINITY;
  o.ramp_up = RampUp{.strategy = RampUpStrategy::kLinear, .start_rps = 1, .end_rps = 3};
  // Rates 1, 2, 3: gaps 1, 1/2, 1/3 s, the first one too.
  EXPECT_EQ(arrival_times_ns(3, o),
            (std::vector<int64_t>{1'000'000'000, 1'500'000'000, 1'833'333'333}));
  o.ramp_up = RampUp{.strategy = RampUpStrategy::kExponential, .start_rps = 1, .end_rps = 4};
  // Rates 1, 2, 4: gaps 1, 1/2, 1/4 s.
  EXPECT_EQ(arrival_times_ns(3, o),
            (std::vector<int64_t>{1'000'000'000, 1'500'000'000, 1'750'000'000}));
  // The ramp sets the rates: a request_rate beside it is not read.
  o.request_rate = 1000;
  EXPECT_EQ(arrival_times_ns(3, o).back(), 1'750'000'000);
  EXPECT_TRUE(arrival_times_ns(0, o).empty());
}

// Gaps are independent gamma draws of shape k and mean 1 / r_i, so m consecutive gaps sum to
// mean sum(1 / r_i) with variance sum(1 / (k r_i^2)). Each check allows 5 standard deviations:
// a correct schedule misses one with probability about 6e-7 for a random seed (and the seed is
// fixed, so the outcome never changes), while a wrong rate misses by far: the rates of the first
// and last tenths of these ramps are 8 times apart or more.
TEST(RampUpArrivals, GammaGapsFollowTheRampInTheFirstAndLastTenth) {
  constexpr size_t n = 20'000, tenth = n / 10;
  for (const RampUpStrategy strategy : {RampUpStrategy::kLinear, RampUpStrategy::kExponential}) {
    for (const double shape : {1.0, 4.0}) {
      ArrivalOptions o;
      o.burstiness = shape;
      o.seed = 11;
      o.ramp_up = RampUp{.strategy = strategy, .start_rps = 10, .end_rps = 1000};
      const std::vector<int64_t> t = arrival_times_ns(n, o);
      ASSERT_EQ(t.size(), n);
      EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
      EXPECT_EQ(t, arrival_times_ns(n, o));  // seeded: the same times again
      ArrivalOptions other = o;
      other.seed = 12;
      EXPECT_NE(t, arrival_times_ns(n, other));
      auto check = [&](size_t first, int64_t sum_ns, const char* part) {
        double mean = 0, variance = 0;
        for (size_t i = first; i < first + tenth; ++i) {
          const double gap = 1.0 / ramp_up_rate(*o.ramp_up, i, n);
          mean += gap;
          variance += gap * gap / shape;
        }
        EXPECT_NEAR(static_cast<double>(sum_ns) / 1e9, mean, 5 * std::sqrt(variance))
            << ramp_up_strategy_name(strategy) << " shape " << shape << ", " << part;
      };
      check(0, t[tenth - 1], "first tenth");  // the first gap runs from t0
      check(n - tenth, t[n - 1] - t[n - tenth - 1], "last tenth");
    }
  }
}

TEST(RampUpArrivals, RejectsAStartOfZeroAnEndBelowItAndABadBurstiness) {
  auto where = [](const RampUp& ramp_up, double burstiness) -> std::string {
    ArrivalOptions o;
    o.ramp_up = ramp_up;
    o.burstiness = burstiness;
    try {
      arrival_times_ns(3, o);
    } catch (const core::Error& e) {
      return e.where();
    }
    return "no error";
  };
  EXPECT_EQ(where({.strategy = RampUpStrategy::kLinear, .start_rps = 0, .end_rps = 5}, 1),
            "--ramp-up-start-rps");
  EXPECT_EQ(where({.strategy = RampUpStrategy::kExponential, .start_rps = 0, .end_rps = 5}, 1),
            "--ramp-up-start-rps");
  EXPECT_EQ(where({.strategy = RampUpStrategy::kLinear, .start_rps = 5, .end_rps = 4}, 1),
            "--ramp-up-end-rps");
  EXPECT_EQ(where({.strategy = RampUpStrategy::kLinear, .start_rps = 1, .end_rps = 4}, 0),
            "--burstiness");
  EXPECT_EQ(where({.strategy = RampUpStrategy::kLinear, .start_rps = 4, .end_rps = 4}, 1),
            "no error");
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
