// Reading result files: formats told by their keys, Python's Infinity accepted, directories
// read in name order, and every bad file refused with one line naming it.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "report/tables.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

namespace fs = std::filesystem;
using namespace test_support;

TEST(LoadRun, VllmResultNamedByItsStem) {
  const RunResult run = load_run(testdata_path("results/serving_llama8B_tp1_random_qps_1.json"));
  EXPECT_EQ(run.format, "vllm");
  EXPECT_EQ(run.test_name, "serving_llama8B_tp1_random_qps_1");
  EXPECT_DOUBLE_EQ(*figure(run, "completed"), 3);
  // Python wrote the infinite burstiness as Infinity.
  EXPECT_TRUE(std::isinf(*figure(run, "burstiness")));
  // No e2el among its percentile metrics: derived from the 3 non-zero latencies.
  EXPECT_DOUBLE_EQ(*figure(run, "mean_e2el_ms"), 2000.0);
  EXPECT_DOUBLE_EQ(*figure(run, "p99_e2el_ms"), 2000.0 + 0.98 * 500.0);  // index 1.98
}

TEST(LoadRun, ServebenchResultNamedByItsMetadata) {
  const RunResult run = load_run(testdata_path("results/servebench_sim_qps_4.json"));
  EXPECT_EQ(run.format, "servebench");
  EXPECT_EQ(run.test_name, "serving_sim_random_qps_4");
  EXPECT_EQ(run.result["gpu_type"], "none (simulator)");
  EXPECT_DOUBLE_EQ(*figure(run, "completed"), 20);
  EXPECT_DOUBLE_EQ(*figure(run, "request_rate"), 4);
}

TEST(LoadRuns, DirectoryInNameOrderFileAlone) {
  const std::vector<RunResult> suite = load_runs(testdata_path("ib"));
  ASSERT_EQ(suite.size(), 3u);
  EXPECT_EQ(suite[0].test_name, "tp4_pp2_qps_01");
  EXPECT_EQ(suite[2].test_name, "tp4_pp2_qps_16");
  EXPECT_EQ(load_runs(testdata_path("ib/tp4_pp2_qps_04.json")).size(), 1u);
}

TEST(LoadRun, RefusesBadFilesNamingThem) {
  TempDir dir;
  expect_refused(dir.write("cut.json", "{\"completed\": 3,"), "not valid JSON");
  expect_refused(dir.write("empty.json", ""), "not valid JSON");
  expect_refused(dir.write("list.json", "[1, 2]"), "top level is not a JSON object");
  expect_refused(dir.write("other.json", "{\"foo\": 1}"), "not a result servebench reads");
  expect_refused(dir.write("text.json", "{\"completed\": \"ten\", \"request_throughput\": 1}"),
                 "\"completed\" is not a number");
  expect_refused(dir.write("lat.json",
                           "{\"completed\": 1, \"request_throughput\": 1, "
                           "\"latencies\": 3}"),
                 "\"latencies\" is not an array");
  // Other tools' reports that lack what the import needs are named at the key.
  expect_refused(dir.write("benchmarks.json", "{\"benchmarks\": [{\"type_\": \"x\"}]}"),
                 "benchmarks[0].metrics: missing");
  expect_refused(dir.write("none.json", "{\"benchmarks\": []}"), "a GuideLLM report with no");
  expect_refused(dir.write("g.json",
                           "{\"benchmarks\": [{\"metrics\": {}, \"args\": {\"strategy\": "
                           "{\"type_\": \"synchronous\"}}, \"request_totals\": "
                           "{\"successful\": \"two\"}}]}"),
                 "benchmarks[0].request_totals.successful: not a number");
  expect_refused(dir.write("summary_lifecycle_metrics.json",
                           "{\"load_summary\": {}, \"successes\": {}, \"failures\": {}}"),
                 "successes.count: missing");
  expect_refused(dir.write("stage_0_lifecycle_metrics.json",
                           "{\"load_summary\": {}, \"successes\": {\"count\": 3, "
                           "\"latency\": {\"request_latency\": {\"mean\": \"slow\"}}}}"),
                 "successes.latency.request_latency.mean: not a number");
  expect_refused(dir.write("latency_x.json",
                           "{\"avg_latency\": 1, \"latencies\": [1], \"percentiles\": "
                           "{\"50\": \"x\"}}"),
                 "\"percentiles.50\" is not a number");
  expect_refused(dir.path() + "/missing.json", "cannot open the file");
}

// nlohmann reports a number beyond a double as out_of_range, not as a parse error; such a file
// is refused like any broken one, at its key.
TEST(LoadRun, RefusesNumbersBeyondADoubleAtTheirKey) {
  TempDir dir;
  expect_refused(dir.write("overflow.json", "{\"completed\":1e400}"),
                 "\"completed\": not valid JSON: number overflow parsing '1e400'");
  expect_refused(dir.write("nested.json",
                           "{\"completed\": 1, \"servebench\": {\"client\": {\"a\": [1, "
                           "{\"b\": -1e999}]}}}"),
                 "\"servebench.client.a[1].b\": not valid JSON: number overflow");
  // A syntax error after a finished member is not put on that member.
  expect_refused(dir.write("cut.json", "{\"completed\": 3, }"), "cut.json: not valid JSON: ");
  expect_refused(dir.write("at.json", "{\"a\": [1, 2, tru]}"), "\"a[2]\": not valid JSON: ");
}

// A value of a type the import did not expect is the file's fault, never an internal error.
TEST(LoadRun, RefusesUnexpectedTypesNamingTheFile) {
  TempDir dir;
  expect_refused(dir.write("g.json",
                           "{\"benchmarks\": [{\"metrics\": {}, \"args\": {\"strategy\": "
                           "{\"type_\": 3}}, \"request_totals\": {\"successful\": 2}}]}"),
                 "benchmarks[0].args.strategy.type_: not a string");
}

TEST(LoadRuns, RefusesADirectoryWithoutResults) {
  TempDir dir;
  dir.write("notes.txt", "not a result");
  expect_refused(dir.path(), "no *.json result files");
  // One bad file in a suite names that file.
  dir.write("a.json", "{\"completed\": 1, \"request_throughput\": 1}");
  const std::string bad = dir.write("b.json", "{");
  try {
    load_runs(dir.path());
    ADD_FAILURE() << "accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": ", 0), 0u) << e.what();
  }
}

TEST(LoadRuns, SkipsASuiteSummaryBesideTheResults) {
  TempDir dir;
  dir.write("summary.json", "{\"latency\": {}, \"throughput\": {}, \"serving\": {}}");
  dir.write("t_qps_1.json", "{\"completed\": 1, \"request_throughput\": 1}");
  const std::vector<RunResult> runs = load_runs(dir.path());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test_name, "t_qps_1");
}

// A suite's or a sweep's files in the order they ran: by start ("date"), then the sweep's own
// sequence (a sweep's files share their date), whatever their names.
TEST(LoadRuns, DirectoryInTheOrderTheRunsStarted) {
  TempDir dir;
  const char* kResult = R"({{"completed": 1, "request_throughput": 1, "date": "{}"{}}})";
  auto sweep = [](int sequence) {
    return fmt::format(R"(, "servebench": {{"load": {{"sequence": {}}}}})", sequence);
  };
  dir.write("a_qps_16.json", fmt::format(fmt::runtime(kResult), "20261126-101500", ""));
  dir.write("b_qps_1.json", fmt::format(fmt::runtime(kResult), "20261126-101000", ""));
  dir.write("openai-9.9qps.json", fmt::format(fmt::runtime(kResult), "20261126-102000", sweep(1)));
  dir.write("openai-1.1qps.json", fmt::format(fmt::runtime(kResult), "20261126-102000", sweep(0)));
  const std::vector<RunResult> runs = load_runs(dir.path());
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].test_name, "b_qps_1");
  EXPECT_EQ(runs[1].test_name, "a_qps_16");
  EXPECT_EQ(runs[2].test_name, "openai-1.1qps");
  EXPECT_EQ(runs[3].test_name, "openai-9.9qps");
}

// GuideLLM v0.3's benchmarks.json: one run per benchmark, GuideLLM's figures under vLLM's keys
// (testdata/guidellm/README.md says where the fixture's schema comes from).
TEST(ImportGuidellm, OneRunPerBenchmarkWithVllmKeys) {
  const std::string path = testdata_path("guidellm/benchmarks.json");
  EXPECT_THROW(load_run(path), core::Error);  // three runs where one was expected
  const std::vector<RunResult> runs = load_file(path);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].format, "guidellm");
  EXPECT_EQ(runs[0].kind, "serving");
  EXPECT_EQ(runs[0].test_name, "benchmarks_synchronous");
  EXPECT_EQ(runs[1].test_name, "benchmarks_throughput");
  EXPECT_EQ(runs[2].test_name, "benchmarks_constant@0.99");
  const RunResult& sync = runs[0];
  EXPECT_DOUBLE_EQ(*figure(sync, "completed"), 1);
  EXPECT_DOUBLE_EQ(*figure(sync, "failed"), 1);  // incomplete + errored
  EXPECT_DOUBLE_EQ(*figure(sync, "incomplete_requests"), 1);
  EXPECT_DOUBLE_EQ(*figure(sync, "max_concurrency"), 1);
  EXPECT_TRUE(std::isinf(*figure(sync, "request_rate")));
  EXPECT_DOUBLE_EQ(*figure(sync, "mean_e2el_ms"), 25010.0);  // GuideLLM keeps seconds
  EXPECT_DOUBLE_EQ(*figure(sync, "mean_ttft_ms"), 289.2);
  EXPECT_DOUBLE_EQ(*figure(sync, "mean_tpot_ms"), 194.7);  // GuideLLM's ITL = vLLM's TPOT
  EXPECT_FALSE(figure(sync, "mean_itl_ms"));               // vLLM's per-chunk ITL: not kept
  EXPECT_DOUBLE_EQ(*figure(sync, "guidellm_tpot.mean_ms"), 193.2);
  EXPECT_EQ(sync.result["date"], "20250520-113336");
  EXPECT_EQ(sync.result["model_id"], "deepseek-ai/DeepSeek-V2.5");
  const RunResult& constant = runs[2];
  EXPECT_DOUBLE_EQ(*figure(constant, "request_rate"), 0.9914);
  EXPECT_TRUE(std::isinf(*figure(constant, "burstiness")));
  EXPECT_DOUBLE_EQ(*figure(constant, "total_input_tokens"), 2827);
  EXPECT_DOUBLE_EQ(*figure(constant, "incomplete_total_output_tokens"), 1163);
}

// inference-perf: a stage report is a run; a directory gives the stages, not the run's summary
// nor the per-request list; the earlier prompt_len / output_len schema is read too.
TEST(ImportInferencePerf, StagesOfADirectory) {
  const std::vector<RunResult> runs = load_runs(testdata_path("inference_perf"));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].test_name, "stage_0_lifecycle_metrics");
  EXPECT_EQ(runs[0].format, "inference-perf");
  EXPECT_DOUBLE_EQ(*figure(runs[0], "completed"), 30);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "failed"), 0);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "request_rate"), 1);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "total_input_tokens"), 60);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "mean_e2el_ms"), 4202.913660966805);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "mean_ttft_ms"), 210);
  EXPECT_DOUBLE_EQ(*figure(runs[2], "total_output_tokens"), 30.0 * 116);  // output_len.mean
  // The summary alone is one run too.
  const RunResult summary =
      load_run(testdata_path("inference_perf/summary_lifecycle_metrics.json"));
  EXPECT_DOUBLE_EQ(*figure(summary, "completed"), 198);
  EXPECT_FALSE(figure(summary, "request_rate"));
}

// vLLM's latency and throughput results are runs of those kinds; figures by dotted key.
TEST(LoadRuns, LatencyAndThroughputKinds) {
  const std::vector<RunResult> runs = load_runs(testdata_path("vllm_kinds"));
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].kind, "latency");
  EXPECT_EQ(runs[0].test_name, "latency_llama8B_tp1");
  EXPECT_DOUBLE_EQ(*figure(runs[0], "avg_latency"), 1.5);
  EXPECT_DOUBLE_EQ(*figure(runs[0], "percentiles.99"), 1.598);
  EXPECT_FALSE(figure(runs[0], "percentiles.98"));
  EXPECT_EQ(runs[1].kind, "serving");
  EXPECT_EQ(runs[3].kind, "throughput");
  EXPECT_DOUBLE_EQ(*figure(runs[3], "tokens_per_second"), 4500);
}

}  // namespace
}  // namespace servebench::report
