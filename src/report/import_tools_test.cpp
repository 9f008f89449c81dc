// AIPerf's and genai-perf's profile exports (JSON and CSV) and SGLang bench_serving's JSONL read
// as runs under vLLM's keys, each tool's ITL put where vLLM's definition puts it; the fixtures'
// READMEs say which documented formats they were built from.
#include <gtest/gtest.h>

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

const char* const kAiperfDir = "aiperf/qwen3-0.6b-openai-chat-concurrency8";
const char* const kGenaiPerfDir = "genai_perf/Qwen_Qwen3-0.6B-openai-chat-concurrency4";

TEST(ImportAiperf, JsonExportUnderVllmKeys) {
  const RunResult run =
      load_run(testdata_path(std::string(kAiperfDir) + "/profile_export_aiperf.json"));
  EXPECT_EQ(run.format, "aiperf");
  EXPECT_EQ(run.kind, "serving");
  // Every run's summary has the same name: the artifact directory names the run.
  EXPECT_EQ(run.test_name, "qwen3-0.6b-openai-chat-concurrency8");
  EXPECT_DOUBLE_EQ(*figure(run, "completed"), 200);
  EXPECT_DOUBLE_EQ(*figure(run, "failed"), 3);
  EXPECT_DOUBLE_EQ(*figure(run, "duration"), 15.2);
  EXPECT_DOUBLE_EQ(*figure(run, "total_input_tokens"), 110000);
  EXPECT_DOUBLE_EQ(*figure(run, "total_output_tokens"), 19370);
  EXPECT_DOUBLE_EQ(*figure(run, "request_throughput"), 200 / 15.2);
  EXPECT_DOUBLE_EQ(*figure(run, "output_throughput"), 19370 / 15.2);
  EXPECT_DOUBLE_EQ(*figure(run, "total_token_throughput"), 129370 / 15.2);
  EXPECT_DOUBLE_EQ(*figure(run, "mean_ttft_ms"), 1588.80);
  EXPECT_DOUBLE_EQ(*figure(run, "median_ttft_ms"), 787.54);
  EXPECT_DOUBLE_EQ(*figure(run, "p99_ttft_ms"), 4119.33);
  // AIPerf's inter_token_latency is per request (latency − TTFT) / (OSL − 1): vLLM's TPOT; its
  // pooled per-chunk gaps (inter_chunk_latency) are vLLM's ITL.
  EXPECT_DOUBLE_EQ(*figure(run, "mean_tpot_ms"), 51.76);
  EXPECT_DOUBLE_EQ(*figure(run, "p99_tpot_ms"), 55.87);
  EXPECT_DOUBLE_EQ(*figure(run, "mean_itl_ms"), 51.70);
  EXPECT_DOUBLE_EQ(*figure(run, "p99_itl_ms"), 95.4);
  EXPECT_DOUBLE_EQ(*figure(run, "mean_e2el_ms"), 6550.36);
  EXPECT_DOUBLE_EQ(*figure(run, "std_e2el_ms"), 1171.14);
  EXPECT_EQ(run.result["date"], "20251017-202208");
  EXPECT_EQ(run.result["model_id"], "Qwen/Qwen3-0.6B");
  EXPECT_DOUBLE_EQ(*figure(run, "max_concurrency"), 8);
  EXPECT_TRUE(std::isinf(*figure(run, "request_rate")));
  EXPECT_EQ(run.result["aiperf"]["schema_version"], "1.5");
}

TEST(ImportAiperf, CsvExportGivesTheSameFiguresRounded) {
  const RunResult csv =
      load_run(testdata_path(std::string(kAiperfDir) + "/profile_export_aiperf.csv"));
  EXPECT_EQ(csv.format, "aiperf");
  EXPECT_EQ(csv.test_name, "qwen3-0.6b-openai-chat-concurrency8");
  EXPECT_DOUBLE_EQ(*figure(csv, "completed"), 200);
  EXPECT_DOUBLE_EQ(*figure(csv, "failed"), 3);
  EXPECT_DOUBLE_EQ(*figure(csv, "duration"), 15.2);
  EXPECT_DOUBLE_EQ(*figure(csv, "total_output_tokens"), 19370);  // "Total Output Sequence Length"
  EXPECT_DOUBLE_EQ(*figure(csv, "request_throughput"), 13.16);
  EXPECT_DOUBLE_EQ(*figure(csv, "mean_tpot_ms"), 51.76);  // "Inter Token Latency (ms)"
  EXPECT_DOUBLE_EQ(*figure(csv, "mean_itl_ms"), 51.70);   // "Inter Chunk Latency (ms)"
  EXPECT_DOUBLE_EQ(*figure(csv, "p90_e2el_ms"), 8594.21);
  // The GPU telemetry section after the blank lines is no metric of the run.
  EXPECT_FALSE(figure(csv, "mean_gpu_power_usage_ms"));
}

TEST(ImportGenaiPerf, JsonExportUnderVllmKeys) {
  const RunResult run =
      load_run(testdata_path(std::string(kGenaiPerfDir) + "/profile_export_genai_perf.json"));
  EXPECT_EQ(run.format, "genai-perf");
  EXPECT_EQ(run.test_name, "Qwen_Qwen3-0.6B-openai-chat-concurrency4");
  EXPECT_DOUBLE_EQ(*figure(run, "completed"), 100);
  EXPECT_DOUBLE_EQ(*figure(run, "request_throughput"), 7.5);
  EXPECT_DOUBLE_EQ(*figure(run, "output_throughput"), 750);
  // Derived: duration = count / throughput, totals = mean length × count.
  EXPECT_DOUBLE_EQ(*figure(run, "duration"), 100 / 7.5);
  EXPECT_DOUBLE_EQ(*figure(run, "total_input_tokens"), 20000);
  EXPECT_DOUBLE_EQ(*figure(run, "total_output_tokens"), 10000);
  EXPECT_DOUBLE_EQ(*figure(run, "total_token_throughput"), 30000 / (100 / 7.5));
  EXPECT_DOUBLE_EQ(*figure(run, "mean_ttft_ms"), 45.2);
  EXPECT_DOUBLE_EQ(*figure(run, "mean_tpot_ms"), 4.8);  // genai-perf's ITL: vLLM's TPOT
  EXPECT_FALSE(figure(run, "mean_itl_ms"));             // no per-chunk gaps in its summary
  EXPECT_DOUBLE_EQ(*figure(run, "p99_e2el_ms"), 690.2);
  EXPECT_DOUBLE_EQ(*figure(run, "max_concurrency"), 4);
  EXPECT_TRUE(std::isinf(*figure(run, "request_rate")));
  EXPECT_EQ(run.result["model_id"], "Qwen/Qwen3-0.6B");
}

TEST(ImportGenaiPerf, CsvExportWithThousandsSeparators) {
  const RunResult csv =
      load_run(testdata_path(std::string(kGenaiPerfDir) + "/profile_export_genai_perf.csv"));
  EXPECT_EQ(csv.format, "genai-perf");
  EXPECT_DOUBLE_EQ(*figure(csv, "mean_ttft_ms"), 45.2);  // "Time To First Token (ms)"
  EXPECT_DOUBLE_EQ(*figure(csv, "mean_tpot_ms"), 4.8);
  EXPECT_DOUBLE_EQ(*figure(csv, "max_e2el_ms"), 1234.5);  // written "1,234.50"
  EXPECT_DOUBLE_EQ(*figure(csv, "request_throughput"), 7.5);
  EXPECT_DOUBLE_EQ(*figure(csv, "output_throughput"), 750);
  EXPECT_FALSE(figure(csv, "completed"));  // the CSV has no request count: n/a, not guessed
  EXPECT_FALSE(figure(csv, "duration"));
}

TEST(ImportSglang, OneRunPerLineNamedByLoad) {
  const std::string path = testdata_path("sglang/sglang_1126_200_sharegpt.jsonl");
  const std::vector<RunResult> runs = load_runs(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].format, "sglang");
  EXPECT_EQ(runs[0].test_name, "sglang_1126_200_sharegpt_qps_4");
  EXPECT_EQ(runs[1].test_name, "sglang_1126_200_sharegpt_concurrency_64");
  const RunResult& a = runs[0];
  EXPECT_DOUBLE_EQ(*figure(a, "completed"), 200);
  EXPECT_DOUBLE_EQ(*figure(a, "duration"), 50);
  EXPECT_DOUBLE_EQ(*figure(a, "request_rate"), 4);
  EXPECT_DOUBLE_EQ(*figure(a, "total_output_tokens"), 40000);
  EXPECT_DOUBLE_EQ(*figure(a, "total_token_throughput"), 1700);  // input + output throughput
  EXPECT_DOUBLE_EQ(*figure(a, "mean_e2el_ms"), 2500.5);          // SGLang's e2e_latency
  EXPECT_DOUBLE_EQ(*figure(a, "p99_e2el_ms"), 3500.9);
  EXPECT_DOUBLE_EQ(*figure(a, "mean_tpot_ms"), 12.2);  // same definitions as vLLM's
  EXPECT_DOUBLE_EQ(*figure(a, "p95_itl_ms"), 14.0);
  EXPECT_DOUBLE_EQ(*figure(a, "mean_concurrency"), 9.9);
  EXPECT_FALSE(figure(a, "failed"));  // SGLang does not write its failures
  EXPECT_EQ(a.result["sglang"]["total_output_tokens_retokenized"], 39876);
  const RunResult& b = runs[1];
  EXPECT_TRUE(std::isinf(*figure(b, "request_rate")));  // Python's Infinity
  EXPECT_DOUBLE_EQ(*figure(b, "max_concurrency"), 64);
  EXPECT_DOUBLE_EQ(*figure(b, "total_token_throughput"), 4250);  // later versions write it
  EXPECT_DOUBLE_EQ(*figure(b, "max_itl_ms"), 80);
}

// The imports take part in every layout: vLLM's serving table and compare read them.
TEST(ImportTools, RowsOfTheServingTable) {
  std::vector<RunResult> runs = load_runs(testdata_path(kAiperfDir));
  ASSERT_EQ(runs.size(), 1u);  // the CSV beside the JSON is not listed twice
  for (RunResult& r : load_runs(testdata_path(kGenaiPerfDir))) runs.push_back(std::move(r));
  ASSERT_EQ(runs.size(), 2u);
  const std::string table = vllm_serving_markdown(runs, MarkdownStyle::kAligned);
  EXPECT_NE(table.find("qwen3-0.6b-openai-chat-concurrency8"), std::string::npos) << table;
  EXPECT_NE(table.find("1588.8"), std::string::npos) << table;
  EXPECT_NE(table.find("Qwen_Qwen3-0.6B-openai-chat-concurrency4"), std::string::npos) << table;
}

TEST(ImportTools, MalformedExportsNameTheFileAndTheKey) {
  TempDir dir;
  expect_refused(dir.write("a.json", R"({"schema_version": "1.5", "request_count": 3})"),
                 "request_count: not an object");
  expect_refused(dir.write("b.json", R"({"schema_version": "1.5",
      "request_count": {"unit": "requests", "avg": "many"}})"),
                 "request_count.avg: not a number");
  expect_refused(dir.write("c.json", R"({"schema_version": "1.5",
      "request_count": {"unit": "requests", "avg": 3},
      "time_to_first_token": {"unit": "fortnights", "avg": 3}})"),
                 "time_to_first_token.unit: 'fortnights' is not a unit of time");
  expect_refused(dir.write("d.json", R"({"schema_version": "1.5"})"), "request_count: missing");
  expect_refused(dir.write("e.json", R"({"request_latency": {"unit": "ms", "avg": 3}})"),
                 "request_throughput: missing");
  expect_refused(dir.write("f.csv", "Metric,avg,min\nRequest Latency (ms),1.0\n"),
                 "line 2: 2 cells under a header of 3");
  expect_refused(dir.write("g.csv", "Metric,Value\nRequest Count,lots\n"),
                 "line 2: \"Request Count\" Value: 'lots' is not a number");
  expect_refused(dir.write("h.csv", "a,b\n1,2\n"), "no \"Metric,");
  expect_refused(dir.write("i.jsonl", "{\"completed\": 1, \"mean_e2e_latency_ms\": 2}\n{oops\n"),
                 "line 2: not valid JSON");
  expect_refused(dir.write("j.jsonl", "{\"completed\": \"x\", \"mean_e2e_latency_ms\": 2}\n"),
                 "completed: not a number");
  expect_refused(dir.write("k.jsonl", "{\"index\": 0, \"sent_ns\": 5}\n"),
                 "line 1: a servebench per-request records file");
  expect_refused(dir.write("l.jsonl", "\n\n"), "no result lines");
}

}  // namespace
}  // namespace servebench::report
