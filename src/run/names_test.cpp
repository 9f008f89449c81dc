// What the run and the command line both write as vLLM writes it (names.h), and tqdm's bar.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "run/names.h"
#include "run/progress.h"

namespace servebench::run {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(PythonFloat, MatchesPythonStr) {
  EXPECT_EQ(python_float(kInf), "inf");
  EXPECT_EQ(python_float(10), "10.0");
  EXPECT_EQ(python_float(100), "100.0");
  EXPECT_EQ(python_float(2.5), "2.5");
  EXPECT_EQ(python_float(0.1), "0.1");
  EXPECT_EQ(python_float(1234.5), "1234.5");
  EXPECT_EQ(python_float(0.0001), "0.0001");
  EXPECT_EQ(python_float(0.00001), "1e-05");
  EXPECT_EQ(python_float(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_float(1e16), "1e+16");
  EXPECT_EQ(python_float(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(python_float(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float(-3), "-3.0");
  EXPECT_EQ(python_float(0), "0.0");
}

TEST(ResultFileName, FollowsVllmPattern) {
  EXPECT_EQ(result_file_name("openai", kInf, 0, "meta-llama/Llama-3-8B", "20240101-120000"),
            "openai-infqps-Llama-3-8B-20240101-120000.json");
  EXPECT_EQ(result_file_name("vllm", 10, 8, "m", "20240101-120000"),
            "vllm-10.0qps-concurrency8-m-20240101-120000.json");
  EXPECT_EQ(result_file_name("x", 2.5, 0, "a/b/c", "d"), "x-2.5qps-c-d.json");
}

TEST(ResultFileName, RampUpFollowsVllmPattern) {
  const schedule::RampUp linear{schedule::RampUpStrategy::kLinear, 1, 20};
  EXPECT_EQ(
      ramp_up_result_file_name("openai", linear, 0, "meta-llama/Llama-3-8B", "20240101-120000"),
      "openai-ramp-up-linear-1qps-20qps-Llama-3-8B-20240101-120000.json");
  const schedule::RampUp exponential{schedule::RampUpStrategy::kExponential, 2, 64};
  EXPECT_EQ(ramp_up_result_file_name("vllm", exponential, 8, "m", "d"),
            "vllm-ramp-up-exponential-2qps-64qps-concurrency8-m-d.json");
}

TEST(UrlForMessages, DropsUserInfoOnly) {
  EXPECT_EQ(url_for_messages("http://user:pw@h:1/v1"), "http://h:1/v1");
  EXPECT_EQ(url_for_messages("https://h:1/a@b"), "https://h:1/a@b");
  EXPECT_EQ(url_for_messages("http://127.0.0.1:8000"), "http://127.0.0.1:8000");
}

TEST(ProgressBar, FormatsAsTqdm) {
  EXPECT_EQ(ProgressBar::format(0, 200, 0.0, 0), "  0%|          | 0/200 [00:00<?, ?it/s]");
  EXPECT_EQ(ProgressBar::format(200, 200, 11.71, 0),
            "100%|██████████| 200/200 [00:11<00:00, 17.08it/s]");
  EXPECT_EQ(ProgressBar::format(50, 200, 10, 0),
            " 25%|██▌       | 50/200 [00:10<00:30,  5.00it/s]");
  EXPECT_EQ(ProgressBar::format(1, 10, 4.0, 0), " 10%|█         | 1/10 [00:04<00:36,  4.00s/it]");
  EXPECT_EQ(ProgressBar::format(1, 2, 3725, 0).find(" 50%|█████     | 1/2 [1:02:05<1:02:05,"), 0u);
  // With a known width the bar fills it: 60 columns - 5 - 34 = 21 cells.
  std::string line = ProgressBar::format(200, 200, 11.71, 60);
  size_t cells = 0;
  for (size_t i = 0; i + 2 < line.size(); ++i) cells += line.compare(i, 3, "█") == 0;
  EXPECT_EQ(cells, 21u);
}

// The first 10 failures by plan index, as vLLM numbers them; a NUL or line break a server sent
// is shown, not printed raw; a key is redacted; an empty error still gets a line.
TEST(FirstErrorsText, ByIndexCappedRedactedAndEscaped) {
  std::vector<std::pair<uint64_t, std::string>> failed = {
      {7, std::string("bad status line 'x\0y'", 21)},
      {2, "line\nbreak"},
      {3, "Bearer abc123"},
      {5, ""}};
  for (uint64_t i = 20; i < 30; ++i) failed.emplace_back(i, "later");
  EXPECT_EQ(first_errors_text(failed),
            "Error 0: line\\x0abreak\n"
            "Error 1: Bearer <redacted>\n"
            "Error 2: (no message)\n"
            "Error 3: bad status line 'x\\x00y'\n"
            "Error 4: later\nError 5: later\nError 6: later\nError 7: later\nError 8: later\n"
            "Error 9: later\n");
}

}  // namespace
}  // namespace servebench::run
