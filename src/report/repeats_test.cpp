// Repeated runs (`run --num-runs`) in the console block, the tables and `compare`, from results
// carrying "servebench.repeats" as run/result_json.cpp writes them.
#include <gtest/gtest.h>

#include <string>

#include "report/report.h"
#include "report/tables.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using namespace test_support;

json stats(double mean, double sd, size_t n, double half) {
  return {
      {"mean", mean}, {"sd", sd}, {"ci95_low", mean - half}, {"ci95_high", mean + half}, {"n", n}};
}

// A result of `n` runs whose TTFT and throughput have the given means and sds; the intervals are
// Student's t with n - 1 dof (t(2) = 4.302653, t(4) = 2.776445).
RunResult repeated(const std::string& name, double ttft, double ttft_sd, double tput, size_t n) {
  const double t = n == 3 ? 4.302653 : 2.776445;
  const double root_n = std::sqrt(static_cast<double>(n));
  json result = {{"completed", 100},
                 {"failed", 0},
                 {"request_throughput", tput},
                 {"mean_ttft_ms", ttft},
                 {"p99_ttft_ms", ttft * 2}};
  result["servebench"]["repeats"] = {
      {"completed", stats(100, 0, n, 0)},
      {"request_throughput", stats(tput, 0.5, n, t * 0.5 / root_n)},
      {"mean_ttft_ms", stats(ttft, ttft_sd, n, t * ttft_sd / root_n)},
      {"p99_ttft_ms", stats(ttft * 2, ttft_sd * 2, n, 2 * t * ttft_sd / root_n)}};
  return RunResult{name + ".json", "servebench", name, result};
}

TEST(RepeatsConsole, OneLinePerFigureWithMeanIntervalAndSd) {
  const std::string out = repeats_console_block(repeated("r", 20, 1, 10, 5).result);
  EXPECT_NE(out.find("Repeated Runs (5 runs)"), std::string::npos) << out;
  // t(4) * 1 / sqrt(5) = 1.2417
  EXPECT_NE(out.find("Mean TTFT (ms):                          20.00 ± 1.24 (sd 1.00, 5 runs)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Successful requests:"), std::string::npos);
  EXPECT_NE(out.find("P99 TTFT (ms):"), std::string::npos);
  // vLLM's order: requests, then throughput, then TTFT.
  EXPECT_LT(out.find("Successful requests:"), out.find("Request throughput (req/s):"));
  EXPECT_LT(out.find("Request throughput (req/s):"), out.find("Mean TTFT (ms):"));
  EXPECT_EQ(repeats_console_block(json{{"completed", 1}}), "");
}

TEST(RepeatsTables, ServingAndConcurrencyCellsCarryTheInterval) {
  const std::vector<RunResult> runs = {repeated("qps_1", 20, 1, 10, 5)};
  const std::string md = vllm_serving_markdown(runs, MarkdownStyle::kAligned);
  EXPECT_NE(md.find("20 ± 1.24"), std::string::npos) << md;
  const std::string conc = concurrency_markdown(runs);
  EXPECT_NE(conc.find("| unlimited | 10 ± 0.62 |"), std::string::npos) << conc << md;
  // GuideLLM's and inference-perf's layouts end with the repeats table.
  for (const std::string& out : {guidellm_tables(runs), inference_perf_stages_markdown(runs)}) {
    EXPECT_NE(out.find("## Repeated runs"), std::string::npos) << out;
    EXPECT_NE(out.find("| qps_1"), std::string::npos) << out;
  }
  // The CSV has every statistic as its own column.
  const std::string csv = figures_csv(runs);
  EXPECT_NE(csv.find("servebench.repeats.mean_ttft_ms.ci95_high"), std::string::npos) << csv;
  // Half-widths of a thousand or more are whole numbers, not "1.89e+03".
  EXPECT_EQ(
      plus_minus(metrics::RepeatStats{.mean = 3522.86, .ci_low = 1635.45, .ci_high = 5410.27}),
      "3522.86 ± 1887");
  // A single run has no repeats table and no ±.
  const std::vector<RunResult> single = {
      RunResult{"s.json", "vllm", "s", {{"completed", 3}, {"mean_ttft_ms", 5.0}}}};
  EXPECT_EQ(repeats_markdown(single), "");
  EXPECT_EQ(vllm_serving_markdown(single, MarkdownStyle::kAligned).find("±"), std::string::npos);
}

TEST(RepeatsCompare, SignificantWhenWelchsTestSaysSo) {
  // TTFT 20 ± sd 1 against 30 ± sd 1, five runs each: t = 10 / sqrt(0.4) = 15.8, p ~ 3e-7.
  const std::vector<CompareInput> inputs = {{"a", {repeated("x", 20, 1, 10, 5)}},
                                            {"b", {repeated("x", 30, 1, 10, 5)}}};
  const std::string md =
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_NE(md.find("b significant (Welch)"), std::string::npos) << md;
  EXPECT_NE(md.find("yes (p="), std::string::npos) << md;
  EXPECT_NE(md.find("20 ± 1.24"), std::string::npos) << md;
  const json j = json::parse(
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kJson));
  EXPECT_EQ(j["rows"][0]["welch"]["b"]["significant"], true);
  EXPECT_LT(j["rows"][0]["welch"]["b"]["p_value"].get<double>(), 1e-5);
  EXPECT_EQ(j["rows"][0]["repeats"]["a"]["n"], 5);
  const std::string csv =
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kCsv);
  EXPECT_NE(lines_of(csv)[0].find(",b significant (Welch)"), std::string::npos) << csv;
  EXPECT_TRUE(lines_of(csv)[1].ends_with(",yes")) << csv;
}

TEST(RepeatsCompare, NotSignificantWithinTheNoise) {
  // TTFT 20 against 22 with sd 5 over three runs each: t = 2 / sqrt(50 / 3) = 0.49, p ~ 0.65.
  const std::vector<CompareInput> inputs = {{"a", {repeated("x", 20, 5, 10, 3)}},
                                            {"b", {repeated("x", 22, 5, 10, 3)}}};
  const json j = json::parse(
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kJson));
  EXPECT_EQ(j["rows"][0]["welch"]["b"]["significant"], false);
  EXPECT_NEAR(j["rows"][0]["welch"]["b"]["p_value"].get<double>(), 0.65, 0.02);
  const std::string md =
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_NE(md.find("no (p="), std::string::npos) << md;
  // Completed has no spread on either side: no test, "n/a".
  const std::string both = compare_runs(inputs, {"completed", "mean_ttft_ms"},
                                        CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_NE(both.find("n/a"), std::string::npos) << both;
}

TEST(RepeatsCompare, SingleRunsHaveNoSignificanceColumn) {
  const std::vector<CompareInput> inputs = {
      {"a", {RunResult{"x.json", "vllm", "x", {{"mean_ttft_ms", 10}}}}},
      {"b", {RunResult{"y.json", "vllm", "y", {{"mean_ttft_ms", 15}}}}}};
  const std::string md =
      compare_runs(inputs, {"mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_EQ(md.find("significant"), std::string::npos) << md;
}

}  // namespace
}  // namespace servebench::report
