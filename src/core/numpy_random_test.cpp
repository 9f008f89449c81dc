// numpy's streams against Debian's python3-numpy: the expectations are
// tests/testdata/numpy_expectations.txt, written by scripts/gen-numpy-expectations.py (the CTest
// numpy_expectations_current checks that file is what numpy gives today).
#include "core/numpy_random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace servebench::core {
namespace {

// name and args, the values after '|'.
struct Case {
  std::vector<std::string> args;
  std::vector<std::string> values;
};

std::vector<Case> cases_named(const std::string& name) {
  std::ifstream in(SERVEBENCH_SOURCE_DIR "/tests/testdata/numpy_expectations.txt");
  EXPECT_TRUE(in) << "tests/testdata/numpy_expectations.txt is missing";
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word != name) continue;
    Case c;
    bool after_bar = false;
    while (words >> word) {
      if (word == "|") {
        after_bar = true;
      } else {
        (after_bar ? c.values : c.args).push_back(word);
      }
    }
    cases.push_back(std::move(c));
  }
  EXPECT_FALSE(cases.empty()) << "no case named " << name;
  return cases;
}

double hex_double(const std::string& text) {
  return std::strtod(text.c_str(), nullptr);
}
uint64_t u64(const std::string& text) {
  return std::stoull(text);
}
int64_t i64(const std::string& text) {
  return std::stoll(text);
}

TEST(NumpyRandomState, RawWordsAreMt19937SeededAsRandomStateSeedsAnInteger) {
  for (const Case& c : cases_named("mt_raw")) {
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    for (const std::string& v : c.values) EXPECT_EQ(rs.next_u32(), u64(v)) << "seed " << c.args[0];
    EXPECT_EQ(rs.words_drawn(), c.values.size());
  }
}

// Each double is compared exactly: the point is the same bits as numpy.
void expect_doubles(const Case& c, const std::function<double()>& draw) {
  for (size_t i = 0; i < c.values.size(); ++i) {
    const double got = draw();
    EXPECT_EQ(got, hex_double(c.values[i]))
        << "draw " << i << " of case " << ::testing::PrintToString(c.args);
  }
}

TEST(NumpyRandomState, RandomSampleExponentialAndGaussAreNumpysLegacyDraws) {
  for (const Case& c : cases_named("random_sample")) {
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    expect_doubles(c, [&] { return rs.random_sample(); });
  }
  for (const Case& c : cases_named("standard_exponential")) {
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    expect_doubles(c, [&] { return rs.standard_exponential(); });
  }
  for (const Case& c : cases_named("gauss")) {  // an odd count: the kept half is used
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    expect_doubles(c, [&] { return rs.gauss(); });
  }
}

TEST(NumpyRandomState, GammaIsNumpysLegacyGammaForShapesBelowAtAndAboveOne) {
  for (const Case& c : cases_named("gamma")) {
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    const double shape = hex_double(c.args[1]), scale = hex_double(c.args[2]);
    expect_doubles(c, [&] { return rs.gamma(shape, scale); });
  }
}

TEST(NumpyRandomState, RandintIsNumpysMaskedRejection) {
  for (const Case& c : cases_named("randint")) {
    NumpyRandomState rs(static_cast<uint32_t>(u64(c.args[0])));
    const int64_t low = i64(c.args[1]), high = i64(c.args[2]);
    for (const std::string& v : c.values) {
      EXPECT_EQ(rs.randint(low, high), i64(v)) << ::testing::PrintToString(c.args);
    }
  }
}

TEST(NumpyRandomState, DiscardSkipsWordsAsIfDrawn) {
  NumpyRandomState drawn(7), skipped(7);
  for (int i = 0; i < 1000; ++i) drawn.next_u32();
  skipped.discard(1000);
  EXPECT_EQ(skipped.words_drawn(), 1000u);
  EXPECT_EQ(drawn.next_u32(), skipped.next_u32());
}

TEST(NumpyGenerator, SeedSequenceStateIsNumpys) {
  for (const Case& c : cases_named("seed_sequence")) {
    uint32_t words[8];
    numpy_seed_sequence_state(u64(c.args[0]), words, 8);
    ASSERT_EQ(c.values.size(), 8u);
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(words[i], u64(c.values[i])) << "seed " << c.args[0];
  }
}

TEST(NumpyGenerator, Pcg64RawOutputIsDefaultRngs) {
  for (const Case& c : cases_named("pcg64_raw")) {
    NumpyGenerator g(u64(c.args[0]));
    for (const std::string& v : c.values) EXPECT_EQ(g.next_u64(), u64(v)) << "seed " << c.args[0];
  }
}

TEST(NumpyGenerator, IntegersAreNumpysAcrossRangesKeepingTheHalfWordBetweenCalls) {
  // The calls scripts/gen-numpy-expectations.py makes on one generator, in its order.
  struct Call {
    int64_t low, high;
    int size;
  };
  const Call calls[] = {{5, 10, 3},
                        {0, 32000, 4},
                        {0, int64_t{1} << 40, 3},
                        {7, 8, 2},
                        {0, int64_t{1} << 32, 3},
                        {100, 100 + (int64_t{1} << 31) + 1, 3},
                        {0, 151936, 5},
                        {-(int64_t{1} << 62), int64_t{1} << 62, 2}};
  for (const Case& c : cases_named("integers_mixed")) {
    NumpyGenerator g(u64(c.args[0]));
    std::vector<int64_t> got;
    for (const Call& call : calls)
      for (int i = 0; i < call.size; ++i) got.push_back(g.integers(call.low, call.high));
    ASSERT_EQ(got.size(), c.values.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], i64(c.values[i])) << "seed " << c.args[0] << " value " << i;
  }
}

}  // namespace
}  // namespace servebench::core
