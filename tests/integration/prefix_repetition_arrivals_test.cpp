// vLLM's prefix_repetition reseeds numpy's global generator and draws its token ids from it
// before the arrival gaps do: a `run` of it at seed 0 sends at vLLM's intended times (numpy's
// own draws in tests/testdata/numpy_expectations.txt, scripts/gen-numpy-expectations.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

// The fixture's delays (s) of `prefix_repetition_arrivals 0 4 3 2 3 12 …`: 12 requests at 4/s
// after two prefixes of 4 ids with three suffixes of 3 ids each.
std::vector<double> fixture_delays_s() {
  const std::string text =
      read_file(std::string(SERVEBENCH_SOURCE_DIR) + "/tests/testdata/numpy_expectations.txt");
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("prefix_repetition_arrivals 0 4 3 2 3 12 ", 0) != 0) continue;
    std::istringstream values(line.substr(line.find('|') + 1));
    std::vector<double> delays;
    for (std::string hex; values >> hex;) delays.push_back(std::strtod(hex.c_str(), nullptr));
    return delays;
  }
  return {};
}

TEST(PrefixRepetitionArrivals, SendTimesAreVllmsForTheSeed) {
  const std::vector<double> d12 = fixture_delays_s();
  ASSERT_EQ(d12.size(), 12u);
  // The same six prompts (2 prefixes × 3) sent as 6 requests: the same first six gaps, rescaled
  // so that the sixth lands at 6 / 4 s, as vLLM rescales them.
  std::vector<int64_t> expected_ns;
  for (size_t i = 0; i < 6; ++i) expected_ns.push_back(std::llround(d12[i] * 1.5 / d12[5] * 1e9));

  TempDir dir;
  const std::string records = dir.path() + "/records.jsonl";
  Outcome o = run({"run",
                   "--dataset-name",
                   "prefix_repetition",
                   "--prefix-repetition-prefix-len",
                   "4",
                   "--prefix-repetition-suffix-len",
                   "3",
                   "--prefix-repetition-num-prefixes",
                   "2",
                   "--prefix-repetition-output-len",
                   "2",
                   "--num-prompts",
                   "6",
                   "--request-rate",
                   "4",
                   "--seed",
                   "0",
                   "--tokenizer",
                   "builtin",
                   "--sim-ttft-ms",
                   "1",
                   "--sim-itl-ms",
                   "1",
                   "--server-metrics",
                   "off",
                   "--disable-tqdm",
                   "--records",
                   records},
                  60);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  std::vector<int64_t> intended(6, -1);
  for (const std::string& line : lines_of(read_file(records))) {
    const json rec = json::parse(line);
    const size_t index = rec["index"].get<size_t>();
    ASSERT_LT(index, intended.size()) << line;
    intended[index] = rec["intended_ns"].get<int64_t>();
  }
  for (size_t i = 0; i < 6; ++i) {
    // vLLM's delay rounded to the nanosecond; the rescale here is done in other steps.
    EXPECT_NEAR(intended[i], expected_ns[i], 2) << "request " << i;
  }
}

}  // namespace
}  // namespace servebench::itest
