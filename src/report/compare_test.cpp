// `compare`: two results, or two suites (seed 000's TP4xPP2 runs with and without InfiniBand)
// matched by test name or by position, with differences and ratios to the baseline.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "report/tables.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using namespace test_support;

std::vector<CompareInput> suites() {
  // The baseline is the run without InfiniBand; it has no qps_16 test.
  return {{"no_ib", load_runs(testdata_path("no_ib"))}, {"ib", load_runs(testdata_path("ib"))}};
}

TEST(CompareRuns, SuitesByTestNameCsv) {
  const auto inputs = suites();
  const std::vector<std::string> lines = lines_of(compare_runs(
      inputs, {"request_throughput", "mean_ttft_ms"}, CompareMatch::kByName, CompareFormat::kCsv));
  ASSERT_EQ(lines.size(), 7u);  // header + 3 tests x 2 metrics
  EXPECT_EQ(lines[0], "Test name,Metric,no_ib,ib,ib - no_ib,ib / no_ib");
  // Seed 000: 0.927083 req/s without IB, 0.924709 with it.
  EXPECT_EQ(lines[1], "tp4_pp2_qps_01,request_throughput,0.927083,0.924709," +
                          json(0.924709 - 0.927083).dump() + "," +
                          json(0.924709 / 0.927083).dump());
  EXPECT_EQ(lines[4].rfind("tp4_pp2_qps_04,mean_ttft_ms,114.265,114.88,", 0), 0u) << lines[4];
  // A test only the second suite ran: the baseline's cells and the differences are empty.
  EXPECT_EQ(lines[5], "tp4_pp2_qps_16,request_throughput,,3.79431,,");
}

TEST(CompareRuns, MarkdownShowsDeltaAndRatio) {
  const auto inputs = suites();
  const std::string out =
      compare_runs(inputs, {"p99_itl_ms"}, CompareMatch::kByName, CompareFormat::kMarkdown);
  const std::vector<std::string> lines = lines_of(out);
  ASSERT_EQ(lines.size(), 5u) << out;
  EXPECT_NE(lines[0].find(" ib - no_ib |"), std::string::npos) << lines[0];
  // 89.4988 vs 95.8214: -6.3226, ratio 0.934.
  EXPECT_NE(lines[2].find("95.8214"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("-6.3226"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("0.934"), std::string::npos) << lines[2];
  EXPECT_NE(lines[4].find("n/a"), std::string::npos) << lines[4];
}

TEST(CompareRuns, ByOrderPairsPositions) {
  std::vector<CompareInput> inputs = {
      {"a", {RunResult{"x.json", "vllm", "x", {{"completed", 10}}}}},
      {"b", {RunResult{"y.json", "vllm", "y", {{"completed", 15}}}}}};
  // Two single results pair up whatever their names.
  const std::string csv =
      compare_runs(inputs, {"completed"}, CompareMatch::kByName, CompareFormat::kCsv);
  EXPECT_EQ(lines_of(csv)[1], "x,completed,10.0,15.0,5.0,1.5");
  inputs[0].runs.push_back(RunResult{"z.json", "vllm", "z", {{"completed", 4}}});
  const std::string by_order =
      compare_runs(inputs, {"completed"}, CompareMatch::kByOrder, CompareFormat::kCsv);
  EXPECT_EQ(lines_of(by_order)[2], "z,completed,4.0,,,");
}

TEST(CompareRuns, DefaultMetricsSkipFiguresNobodyHas) {
  const auto inputs = suites();
  const json j = json::parse(compare_runs(inputs, {}, CompareMatch::kByName, CompareFormat::kJson));
  EXPECT_EQ(j["baseline"], "no_ib");
  EXPECT_EQ(j["inputs"], json::array({"no_ib", "ib"}));
  std::set<std::string> metrics;
  for (const json& row : j["rows"]) metrics.insert(row["metric"].get<std::string>());
  EXPECT_TRUE(metrics.count("p99_tpot_ms"));
  EXPECT_FALSE(metrics.count("mean_e2el_ms"));  // neither suite carries E2EL nor latencies
  const json& first = j["rows"][0];
  EXPECT_EQ(first["test_name"], "tp4_pp2_qps_01");
  EXPECT_EQ(first["metric"], "completed");
  EXPECT_EQ(first["values"]["ib"], 200.0);
  EXPECT_EQ(first["delta"]["ib"], 0.0);
  EXPECT_EQ(first["ratio"]["ib"], 1.0);
  EXPECT_FALSE(first["delta"].contains("no_ib"));
}

// `run --profile sweep` names its files after vLLM's ("openai-0.9876qps-…"), its benchmarks
// "constant@0.99": rows say the benchmark, and both names when two sweeps differ by position.
TEST(CompareRuns, RowsOfSweepsAreNamedByTheirBenchmarks) {
  auto run = [](const std::string& stem, const std::string& benchmark, double completed) {
    json result = {{"completed", completed},
                   {"servebench", {{"load", {{"benchmark", benchmark}}}}}};
    return RunResult{stem + ".json", "servebench", stem, result};
  };
  const std::vector<CompareInput> inputs = {
      {"noib", {run("openai-0.9876qps-servebench-sim-a", "constant@0.99", 11)}},
      {"ib", {run("openai-0.9321qps-servebench-sim-b", "constant@0.93", 11)}}};
  const std::string csv =
      compare_runs(inputs, {"completed"}, CompareMatch::kByOrder, CompareFormat::kCsv);
  EXPECT_EQ(lines_of(csv)[1].rfind("constant@0.99 / constant@0.93,completed,", 0), 0u) << csv;
  const std::vector<CompareInput> same = {{"a", {run("x-1", "throughput", 1)}},
                                          {"b", {run("x-2", "throughput", 2)}}};
  EXPECT_EQ(
      lines_of(compare_runs(same, {"completed"}, CompareMatch::kByOrder, CompareFormat::kCsv))[1]
          .rfind("throughput,completed,", 0),
      0u);
}

// inference-perf's stages of one test share its test name: rows say the stage.
TEST(CompareRuns, RowsOfStagesAreNamedByTheirStage) {
  auto stage = [](int index) {
    const std::string name = "stage_" + std::to_string(index);
    json result = {{"completed", 5},
                   {"servebench", {{"stage", {{"index", index}, {"name", name}}}}}};
    return RunResult{name + ".json", "servebench", "inference-perf-ib", result};
  };
  const std::vector<CompareInput> inputs = {{"noib", {stage(0), stage(1)}},
                                            {"ib", {stage(0), stage(1)}}};
  const std::vector<std::string> lines =
      lines_of(compare_runs(inputs, {"completed"}, CompareMatch::kByOrder, CompareFormat::kCsv));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1].rfind("stage_0,completed,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("stage_1,completed,", 0), 0u) << lines[2];
}

}  // namespace
}  // namespace servebench::report
