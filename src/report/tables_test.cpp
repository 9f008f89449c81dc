// The layouts filled from results: vLLM's suite table and pandas JSON from seed 002's own
// numbers, seed 000's table, seed 004's concurrency table, GuideLLM's tables with their
// definitions, inference-perf's stages, the CSV of every figure.
#include "report/tables.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/test_support.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using namespace test_support;

RunResult make_run(const std::string& name, json result, const std::string& format = "vllm") {
  return RunResult{name + ".json", format, name, std::move(result)};
}

// Seed 002's four serving results, rebuilt from its pandas JSON (full precision), in its order.
std::vector<RunResult> seed002_runs() {
  const json tables = json::parse(testdata("seed002_pandas.json"));
  const json& serving = tables["serving"];
  static const std::pair<const char*, const char*> kKeys[] = {
      {"# of req.", "completed"},
      {"Tput (req/s)", "request_throughput"},
      {"Output Tput (tok/s)", "output_throughput"},
      {"Total Tput (tok/s)", "total_token_throughput"},
      {"Mean TTFT (ms)", "mean_ttft_ms"},
      {"Median TTFT (ms)", "median_ttft_ms"},
      {"P99 TTFT (ms)", "p99_ttft_ms"},
      {"Mean TPOT (ms)", "mean_tpot_ms"},
      {"Median TPOT (ms)", "median_tpot_ms"},
      {"P99 TPOT (ms)", "p99_tpot_ms"},
      {"Mean ITL (ms)", "mean_itl_ms"},
      {"Median ITL (ms)", "median_itl_ms"},
      {"P99 ITL (ms)", "p99_itl_ms"}};
  std::vector<RunResult> runs;
  for (const char* row : {"0", "1", "2", "3"}) {
    json r = {{"gpu_type", serving["GPU"][row]}};
    for (const auto& [column, key] : kKeys) r[key] = serving[column][row];
    runs.push_back(make_run(serving["Test name"][row].get<std::string>(), r));
  }
  return runs;
}

TEST(VllmServingMarkdown, Seed002FromItsOwnNumbers) {
  const std::vector<RunResult> runs = seed002_runs();
  const std::vector<std::string> out =
      lines_of(vllm_serving_markdown(runs, MarkdownStyle::kTabulate));
  const std::vector<std::string> golden = lines_of(testdata("seed002_serving.md"));
  ASSERT_EQ(out.size(), golden.size());
  for (size_t i = 0; i < golden.size(); ++i) {
    // Sorted by test name, GPU as "1x…", numbers in tabulate's "g" — everything right of the
    // hand-shortened name column is the seed's text.
    const auto after_name = [](const std::string& l) { return l.substr(l.find('|', 1)); };
    EXPECT_EQ(after_name(out[i]), after_name(golden[i])) << "line " << i;
  }
  EXPECT_NE(out[2].find("| tp4_pp2_optimized_IB_qps_01 "), std::string::npos);
  EXPECT_NE(out[5].find("| tp4_pp2_optimized_IB_qps_inf "), std::string::npos);
}

TEST(VllmPandasJson, Seed002ByteForByte) {
  EXPECT_EQ(vllm_pandas_json(seed002_runs()) + "\n", testdata("seed002_pandas.json"));
  EXPECT_EQ(vllm_pandas_json({}), "{\"latency\": {}, \"throughput\": {}, \"serving\": {}}");
}

// pandas is not installed here; Python's json module checks the dict-of-dicts orientation that
// pd.DataFrame.from_dict reads as {column: {row: value}}.
TEST(VllmPandasJson, PythonReadsColumnsOfRows) {
  if (std::system("python3 -c pass > /dev/null 2>&1") != 0) GTEST_SKIP() << "no python3";
  std::vector<RunResult> runs = seed002_runs();
  runs.push_back(make_run("no_gpu_no_ttft", {{"completed", 3}, {"request_throughput", 0.5}}));
  const auto dir = std::filesystem::temp_directory_path() / "servebench_pandas_json_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "tables.json").string();
  std::ofstream(path) << vllm_pandas_json(runs);
  const std::string script = R"PY(
import json, sys
t = json.load(open(sys.argv[1]))
assert list(t) == ["latency", "throughput", "serving"], list(t)
assert t["latency"] == {} and t["throughput"] == {}
s = t["serving"]
assert list(s)[:3] == ["Test name", "GPU", "# of req."], list(s)
assert len(s) == 15
rows = [str(i) for i in range(5)]
for column, cells in s.items():
    assert isinstance(cells, dict) and list(cells) == rows, column
assert s["Test name"]["4"] == "no_gpu_no_ttft"
assert s["GPU"]["4"] is None and s["Mean TTFT (ms)"]["4"] is None
assert s["# of req."]["0"] == 200 and isinstance(s["# of req."]["0"], int)
assert abs(s["Tput (req/s)"]["1"] - 3.794314379904193) < 1e-15
)PY";
  std::ofstream(dir / "check.py") << script;
  const std::string command = "python3 " + (dir / "check.py").string() + " " + path;
  EXPECT_EQ(std::system(command.c_str()), 0);
  std::filesystem::remove_all(dir);
}

TEST(VllmServingMarkdown, Seed000AlignedFromItsNumbers) {
  const std::string golden = testdata("seed000_cumulative.md");
  const std::vector<std::string> lines = lines_of(golden);
  const std::vector<std::string> headers = markdown_cells(lines[0]);
  static const char* const kKeys[] = {
      "completed",      "request_throughput", "output_throughput", "total_token_throughput",
      "mean_ttft_ms",   "median_ttft_ms",     "p99_ttft_ms",       "mean_tpot_ms",
      "median_tpot_ms", "p99_tpot_ms",        "mean_itl_ms",       "median_itl_ms",
      "p99_itl_ms"};
  std::vector<RunResult> runs;
  for (size_t i = 2; i < lines.size(); ++i) {
    const std::vector<std::string> cells = markdown_cells(lines[i]);
    ASSERT_EQ(cells.size(), 15u);
    json r = {{"gpu_type", cells[1].substr(2)}};  // the table prints "1x" + gpu_type
    for (size_t k = 0; k < 13; ++k) r[kKeys[k]] = std::stod(cells[k + 2]);
    runs.push_back(make_run(cells[0], r));
  }
  EXPECT_EQ(vllm_serving_markdown(runs, MarkdownStyle::kAligned), golden);
}

TEST(VllmServingMarkdown, GpuLinesAndMissingFigures) {
  std::vector<RunResult> runs = {
      make_run("b", {{"gpu_type", "H100\nH100\nH100"}, {"completed", 2}}),
      make_run("a", {{"completed", 1}})};
  const std::string out = vllm_serving_markdown(runs, MarkdownStyle::kAligned);
  EXPECT_NE(out.find("| b         | 3xH100 | 2         | n/a"), std::string::npos) << out;
  EXPECT_NE(out.find("| a         | n/a    | 1         | n/a"), std::string::npos) << out;
  // The tabulate style sorts by name.
  const std::string sorted = vllm_serving_markdown(runs, MarkdownStyle::kTabulate);
  EXPECT_LT(sorted.find("| a "), sorted.find("| b "));
}

TEST(ConcurrencyMarkdown, Seed004FromItsNumbers) {
  const std::vector<std::string> golden = lines_of(testdata("seed004_concurrency.md"));
  static const char* const kKeys[] = {"request_throughput", "output_throughput", "mean_e2el_ms",
                                      "p99_e2el_ms",        "mean_ttft_ms",      "p99_ttft_ms",
                                      "mean_tpot_ms",       "p99_tpot_ms"};
  std::vector<RunResult> runs;
  for (size_t i = 4; i < golden.size(); ++i) {
    const std::vector<std::string> cells = markdown_cells(golden[i]);
    json r = {{"label", "ISL:OSL=3000:150"}, {"max_concurrency", std::stoi(cells[0])}};
    for (size_t k = 0; k < 8; ++k) r[kKeys[k]] = std::stod(cells[k + 1]);
    runs.push_back(make_run("c" + cells[0], r));
  }
  std::reverse(runs.begin(), runs.end());  // rows come out by concurrency whatever the input order
  std::string expected;
  for (const std::string& l : golden) expected += l + "\n";
  EXPECT_EQ(concurrency_markdown(runs), expected);
}

TEST(ConcurrencyMarkdown, OneTablePerLabelAndE2elFromLatencies) {
  std::vector<RunResult> runs = {
      make_run("x", {{"label", "vllm"},
                     {"max_concurrency", 2},
                     {"completed", 2},
                     {"latencies", {1.0, 0.0, 3.0}}}),
      make_run("y", {{"label", "dynamo"}, {"max_concurrency", nullptr}, {"completed", 1}})};
  const std::string out = concurrency_markdown(runs);
  EXPECT_LT(out.find("## Benchmark Result (vllm)"), out.find("## Benchmark Result (dynamo)"));
  // vLLM's latencies: 0 for the failure, so E2EL is over 1 s and 3 s: mean 2000 ms.
  EXPECT_NE(out.find("| 2 | n/a | n/a | 2000 | 2980 |"), std::string::npos) << out;
  EXPECT_NE(out.find("| unlimited | n/a |"), std::string::npos) << out;
}

TEST(Figure, DerivesE2elOnlyWhenLatenciesMatchCompleted) {
  const RunResult ok = make_run("r", {{"completed", 2}, {"latencies", {0.5, 0.0, 1.5}}});
  EXPECT_DOUBLE_EQ(*figure(ok, "mean_e2el_ms"), 1000.0);
  EXPECT_DOUBLE_EQ(*figure(ok, "median_e2el_ms"), 1000.0);
  EXPECT_DOUBLE_EQ(*figure(ok, "p50_e2el_ms"), 1000.0);
  EXPECT_DOUBLE_EQ(*figure(ok, "p99.9_e2el_ms"), 1000.0 * (0.5 + 0.999 * 1.0));
  const RunResult mismatch = make_run("r", {{"completed", 3}, {"latencies", {0.5, 0.0, 1.5}}});
  EXPECT_FALSE(figure(mismatch, "mean_e2el_ms").has_value());
  const RunResult stored = make_run("r", {{"mean_e2el_ms", 7.0}, {"request_rate", "inf"}});
  EXPECT_DOUBLE_EQ(*figure(stored, "mean_e2el_ms"), 7.0);
  EXPECT_TRUE(std::isinf(*figure(stored, "request_rate")));
  EXPECT_FALSE(figure(stored, "p99_ttft_ms").has_value());
}

// A servebench run with --save-detailed: three requests, one failed.
RunResult detailed_servebench_run() {
  json r = {{"date", "20260101-235950"},
            {"request_rate", 2.0},
            {"burstiness", 1.0},
            {"max_concurrency", nullptr},
            {"duration", 20.0},
            {"completed", 2},
            {"failed", 1},
            {"total_input_tokens", 30},
            {"total_output_tokens", 15},
            {"request_throughput", 0.1},
            {"output_throughput", 0.75},
            {"total_token_throughput", 2.5},
            {"mean_ttft_ms", 150.0},
            {"median_ttft_ms", 150.0},
            {"p99_ttft_ms", 199.0},
            {"mean_tpot_ms", 100.0},
            {"median_tpot_ms", 100.0},
            {"p99_tpot_ms", 100.0},
            {"latencies", {1.2, 0.0, 0.6}},
            {"ttfts", {0.1, 0.0, 0.2}},
            {"output_lens", {10, 0, 5}},
            {"errors", {"", "HTTP 503", ""}},
            {"servebench", {{"failures_by_reason", {{"http_503", 1}}}}}};
  return make_run("detailed", r, "servebench");
}

using Cells = std::vector<std::string>;

// GuideLLM's report from its Info table on: the Metadata block above it is checked apart.
std::vector<std::string> info_stats_lines(const std::string& report) {
  const size_t at = report.find("Benchmarks Info:");
  return lines_of(at == std::string::npos ? report : report.substr(at));
}

TEST(GuidellmTables, FollowsGuidellmDefinitionsFromDetail) {
  const std::string out = guidellm_tables(std::vector<RunResult>{detailed_servebench_run()});
  const std::vector<std::string> lines = info_stats_lines(out);
  ASSERT_EQ(lines.size(), 15u) << out;
  EXPECT_EQ(lines[0], "Benchmarks Info:");
  EXPECT_EQ(lines[8], "Benchmarks Stats:");
  EXPECT_EQ(split_cells(lines[3])[0], "Benchmark");
  // poisson@2.00; servebench stamps the start, so 23:59:50 + 20 s wraps to 00:00:10; nothing
  // cancelled, so 0 incomplete and the failure errored; per-request token figures of failures
  // are not in the result.
  EXPECT_EQ(split_cells(lines[5]),
            (Cells{"poisson@2.00", "23:59:50", "00:00:10", "20.0", "2", "0", "1", "15.0", "n/a",
                   "n/a", "7.5", "n/a", "n/a", "30", "n/a", "n/a", "15", "n/a", "n/a"}));
  // Concurrency (1.2 + 0.6) / 20; latency in s from the latencies (mean 0.9, p99 1.194);
  // GuideLLM's ITL is vLLM's TPOT; GuideLLM's TPOT = (latency - ttft) / tokens: 110 and 80 ms.
  EXPECT_EQ(split_cells(lines[13]),
            (Cells{"poisson@2.00", "0.10", "0.09", "0.8", "2.5", "0.90", "0.90", "1.19", "150.0",
                   "150.0", "199.0", "100.0", "100.0", "100.0", "95.0", "95.0", "109.7"}));
  EXPECT_NE(lines[10].find("Req Latency (s)"), std::string::npos);
}

TEST(GuidellmTables, WithoutDetailTpotAndIncompleteAreUnavailable) {
  RunResult run = detailed_servebench_run();
  run.format = "vllm";
  for (const char* key : {"ttfts", "output_lens", "errors", "servebench"}) run.result.erase(key);
  run.result["request_rate"] = "inf";
  run.result["max_concurrency"] = 8;
  const std::vector<std::string> lines =
      info_stats_lines(guidellm_tables(std::vector<RunResult>{run}));
  ASSERT_EQ(lines.size(), 15u);
  // vLLM stamps the end, so the start is 20 s before; vLLM cannot tell incomplete from errored.
  const Cells info = split_cells(lines[5]);
  EXPECT_EQ(Cells(info.begin(), info.begin() + 7),
            (Cells{"concurrent@8", "23:59:30", "23:59:50", "20.0", "2", "n/a", "1"}));
  const Cells stats = split_cells(lines[13]);
  EXPECT_EQ(Cells(stats.begin() + 14, stats.end()), (Cells{"n/a", "n/a", "n/a"}));
  EXPECT_EQ(stats[5], "0.90");  // E2EL still comes from the latencies vLLM always keeps
}

// A hand-edited result whose "errors" is not a list: no per-request detail, not a crash.
TEST(GuidellmTables, ErrorsNotAListMeansNoDetail) {
  RunResult run = detailed_servebench_run();
  run.result["errors"] = "x";
  const std::vector<std::string> lines =
      info_stats_lines(guidellm_tables(std::vector<RunResult>{run}));
  ASSERT_EQ(lines.size(), 15u);
  const Cells stats = split_cells(lines[13]);
  EXPECT_EQ(Cells(stats.begin() + 14, stats.end()), (Cells{"n/a", "n/a", "n/a"}));
}

TEST(GuidellmTables, RampUpRunIsNamedByItsRampNotAsThroughput) {
  // A ramp-up result: request_rate "inf" and no concurrency would read as "throughput".
  RunResult run = detailed_servebench_run();
  run.result["request_rate"] = "inf";
  run.result["ramp_up_strategy"] = "linear";
  run.result["ramp_up_start_rps"] = 1;
  run.result["ramp_up_end_rps"] = 20;
  run.result["rps_change_events"] = json::parse(
      R"([{"rps": 1, "timestamp": "2026-01-01T23:59:50"},
          {"rps": 2, "timestamp": "2026-01-01T23:59:51.25"}])");
  const std::vector<RunResult> runs = {run};
  const std::vector<std::string> lines = info_stats_lines(guidellm_tables(runs));
  ASSERT_EQ(lines.size(), 15u);
  EXPECT_EQ(split_cells(lines[5])[0], "ramp-up linear 1->20");
  EXPECT_EQ(split_cells(lines[5])[3], "20.0");  // the rest of the row as for any run
  EXPECT_EQ(split_cells(lines[13])[0], "ramp-up linear 1->20");
  // The events are an array: left out of the CSV, the ramp's scalars kept.
  const std::string csv = figures_csv(runs);
  EXPECT_EQ(csv.find("rps_change_events"), std::string::npos);
  EXPECT_NE(csv.find("ramp_up_start_rps"), std::string::npos);
}

TEST(GuidellmTables, MetadataBlockAboveTheTables) {
  RunResult run = detailed_servebench_run();
  run.result["servebench"]["load"] = {{"profile", "sweep"}, {"benchmark", "constant@2.00"},
                                      {"sequence", 2},      {"strategy", "constant"},
                                      {"duration_s", 30.0}, {"max_requests", nullptr}};
  const std::vector<std::string> lines = lines_of(guidellm_tables(std::vector<RunResult>{run}));
  ASSERT_GE(lines.size(), 9u);
  EXPECT_EQ(lines[0], "Benchmarks Metadata:");
  EXPECT_EQ(lines[2], "    Duration:20.0 seconds");
  EXPECT_EQ(lines[3], "    Profile:type=sweep, strategies=['constant'], max_concurrency=None");
  EXPECT_EQ(lines[4], "    Args:max_number=None, max_duration=30.0");
  EXPECT_EQ(lines[6].rfind("    Request Loader:data='prompt_tokens=15,output_tokens=8'", 0), 0u)
      << lines[6];
  EXPECT_EQ(lines[9], "Benchmarks Info:");
}

TEST(GuidellmTables, TwoSweepsAreTwoBlocksUnderTheirDirectoryNames) {
  RunResult noib = detailed_servebench_run(), ib = detailed_servebench_run();
  noib.source = "results/noib/a.json";
  ib.source = "results/ib/a.json";
  const std::string out = guidellm_tables(std::vector<RunResult>{noib, ib});
  const size_t first = out.find("### noib\n"), second = out.find("### ib\n");
  ASSERT_NE(first, std::string::npos) << out;
  ASSERT_NE(second, std::string::npos) << out;
  EXPECT_LT(first, second);
  // Each block has its own Metadata, Info and Stats.
  EXPECT_NE(out.find("Benchmarks Stats:", first), out.find("Benchmarks Stats:", second));
  EXPECT_NE(out.find("Benchmarks Metadata:", second), std::string::npos);
  // One sweep: no heading.
  EXPECT_EQ(guidellm_tables(std::vector<RunResult>{noib}).find("###"), std::string::npos);
}

TEST(InferencePerfStages, PythonFloatsAndRequestCounts) {
  std::vector<RunResult> runs = {make_run("a", {{"request_rate", 1.0},
                                                {"completed", 30},
                                                {"failed", 0},
                                                {"total_input_tokens", 60},
                                                {"total_output_tokens", 900},
                                                {"mean_e2el_ms", 4250.0}}),
                                 make_run("b", {{"request_rate", 2.5},
                                                {"completed", 3},
                                                {"failed", 1},
                                                {"total_input_tokens", 7},
                                                {"total_output_tokens", 90}})};
  EXPECT_EQ(inference_perf_stages_markdown(runs),
            "| qps | total_requests | avg_prompt_tokens  | avg_output_tokens | "
            "avg_time_per_request |\n"
            "|-----|----------------|--------------------|-------------------|"
            "----------------------|\n"
            "| 1   | 30             | 2.0                | 30.0              | "
            "4.25                 |\n"
            "| 2.5 | 4              | 2.3333333333333335 | 30.0              | "
            "n/a                  |\n");
}

TEST(FiguresCsv, EveryScalarFigureFlattenedArraysLeftOut) {
  std::vector<RunResult> runs = {detailed_servebench_run(),
                                 make_run("with,comma", {{"completed", 5}, {"label", "a \"b\""}})};
  const std::vector<std::string> lines = lines_of(figures_csv(runs));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("test_name,source,format,", 0), 0u);
  EXPECT_NE(lines[0].find(",servebench.failures_by_reason.http_503"), std::string::npos);
  EXPECT_EQ(lines[0].find("latencies"), std::string::npos);
  EXPECT_EQ(lines[1].rfind("detailed,detailed.json,servebench,", 0), 0u);
  EXPECT_EQ(lines[2].rfind("\"with,comma\",\"with,comma.json\",vllm,", 0), 0u);
  EXPECT_NE(lines[2].find("\"a \"\"b\"\"\""), std::string::npos);
}

TEST(FiguresCsv, OneTestNameColumnWhenTheResultHasItsOwn) {
  // A suite's results carry "test_name" (vLLM's run_serving_tests.sh adds it); it is the first
  // column, not a second one.
  std::vector<RunResult> runs = {
      make_run("serving_a", {{"test_name", "serving_a"}, {"completed", 5}})};
  const std::vector<std::string> lines = lines_of(figures_csv(runs));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "test_name,source,format,completed");
  EXPECT_EQ(lines[1], "serving_a,serving_a.json,vllm,5");
}

}  // namespace
}  // namespace servebench::report
