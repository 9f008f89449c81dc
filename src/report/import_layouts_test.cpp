// Imported GuideLLM and inference-perf reports, and vLLM's latency and throughput results, in
// every layout: GuideLLM's tables reproduce seed 003's rows from a benchmarks.json carrying
// them, inference-perf's stages table seed 003's stages, the pandas JSON has the three tables in
// pandas' orientation, and compare sets imported runs side by side.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "report/tables.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using namespace test_support;

// The trimmed cells of the line whose first cell is `name`, in a table of '|'-joined cells.
std::vector<std::string> row_cells(const std::string& table, const std::string& name) {
  for (const std::string& line : lines_of(table)) {
    std::vector<std::string> cells =
        line.starts_with("|") ? markdown_cells(line) : split_cells(line);
    if (!cells.empty() && cells.front() == name) return cells;
  }
  return {};
}

TEST(ImportedGuidellm, InfoAndStatsRowsAreSeed003s) {
  const std::vector<RunResult> runs = load_runs(testdata_path("guidellm/benchmarks.json"));
  const std::string tables = guidellm_tables(runs);
  const std::string seed_info = testdata("seed003_guidellm_info.txt");
  const std::string seed_stats = testdata("seed003_guidellm_stats.txt");
  const size_t stats_at = tables.find("Benchmarks Stats:");
  ASSERT_NE(stats_at, std::string::npos);
  for (const char* name : {"synchronous", "throughput", "constant@0.99"}) {
    const std::vector<std::string> seed_row = row_cells(seed_info, name);
    ASSERT_FALSE(seed_row.empty()) << name;
    EXPECT_EQ(row_cells(tables.substr(0, stats_at), name), seed_row) << name;
    const std::vector<std::string> seed_stats_row = row_cells(seed_stats, name);
    ASSERT_FALSE(seed_stats_row.empty()) << name;
    EXPECT_EQ(row_cells(tables.substr(stats_at), name), seed_stats_row) << name;
  }
}

TEST(ImportedGuidellm, VllmTableLabelsWhatIsMissing) {
  const std::vector<RunResult> runs = load_runs(testdata_path("guidellm/benchmarks.json"));
  const std::string md = vllm_serving_markdown(runs, MarkdownStyle::kAligned);
  const std::vector<std::string> sync = row_cells(md, "benchmarks_synchronous");
  ASSERT_EQ(sync.size(), 15u);
  EXPECT_EQ(sync[2], "1");      // # of req.
  EXPECT_EQ(sync[6], "289.2");  // Mean TTFT
  EXPECT_EQ(sync[9], "194.7");  // Mean TPOT: GuideLLM's ITL
  EXPECT_EQ(sync[12], "n/a");   // Mean ITL: GuideLLM keeps no per-chunk ITL
  EXPECT_EQ(sync[1], "n/a");    // GPU
  // The concurrency table: synchronous is concurrency 1, the rest unlimited.
  const std::string concurrency = concurrency_markdown(runs);
  EXPECT_NE(concurrency.find("| 1 | 0.04 |"), std::string::npos) << concurrency;
  EXPECT_NE(concurrency.find("| unlimited | 7.6 |"), std::string::npos) << concurrency;
  // CSV names the format.
  EXPECT_NE(figures_csv(runs).find(",guidellm,"), std::string::npos);
}

TEST(ImportedInferencePerf, StagesTableIsSeed003s) {
  const std::vector<RunResult> runs = load_runs(testdata_path("inference_perf"));
  const std::vector<std::string> lines = lines_of(inference_perf_stages_markdown(runs));
  const std::vector<std::string> seed = lines_of(testdata("seed003_inference_perf.md"));
  ASSERT_EQ(lines.size(), 5u);
  // Header and the first three stages' cells as the seed has them.
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 1) continue;  // the rule's width follows the widest cell
    EXPECT_EQ(split_cells(lines[i]), split_cells(seed[i])) << lines[i];
  }
  // GuideLLM's layout of the same runs: what inference-perf does not report is n/a.
  const std::vector<std::string> info = row_cells(guidellm_tables(runs), "poisson@1.00");
  ASSERT_FALSE(info.empty());
  EXPECT_EQ(info[1], "n/a");  // no start time in the report
  EXPECT_EQ(info[4], "30");
}

TEST(SuiteKinds, PandasJsonHasThreeTablesAsPythonReadsThem) {
  const std::vector<RunResult> runs = load_runs(testdata_path("vllm_kinds"));
  const std::string text = vllm_pandas_json(runs);
  const json tables = json::parse(text);
  ASSERT_TRUE(tables.contains("latency") && tables.contains("throughput") &&
              tables.contains("serving"));
  EXPECT_EQ(tables["latency"]["Test name"]["0"], "latency_llama8B_tp1");
  EXPECT_DOUBLE_EQ(tables["latency"]["Mean latency (ms)"]["0"].get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(tables["latency"]["P99 latency (ms)"]["0"].get<double>(), 1598.0);
  EXPECT_EQ(tables["throughput"]["# of req."]["0"], 200);
  EXPECT_DOUBLE_EQ(tables["throughput"]["Tput (tok/s)"]["0"].get<double>(), 4500.0);
  EXPECT_EQ(tables["serving"]["Test name"].size(), 2u);
  // Column order is vLLM's: the text, not nlohmann's sorted keys.
  EXPECT_LT(text.find("\"Mean latency (ms)\""), text.find("\"Median latency (ms)\""));
  EXPECT_LT(text.find("\"Elapsed time (s)\""), text.find("\"Tput (req/s)\""));
  // Without such runs the tables are {} as before.
  const std::vector<RunResult> serving = runs_of_kind(runs, "serving");
  EXPECT_EQ(vllm_pandas_json(serving).rfind("{\"latency\": {}, \"throughput\": {}, ", 0), 0u);
}

TEST(SuiteKinds, MarkdownSectionsPerKind) {
  const std::vector<RunResult> runs = load_runs(testdata_path("vllm_kinds"));
  const std::string md = vllm_suite_markdown(runs, MarkdownStyle::kTabulate);
  const size_t latency = md.find("## Latency tests\n\n| Test name ");
  const size_t throughput = md.find("## Throughput tests\n\n| Test name ");
  const size_t serving = md.find("## Serving tests\n\n| Test name ");
  ASSERT_NE(latency, std::string::npos) << md;
  ASSERT_NE(throughput, std::string::npos) << md;
  ASSERT_NE(serving, std::string::npos) << md;
  EXPECT_LT(latency, throughput);
  EXPECT_LT(throughput, serving);
  const std::vector<std::string> lat = row_cells(md, "latency_llama8B_tp1");
  EXPECT_EQ(lat, (std::vector<std::string>{"latency_llama8B_tp1", "n/a", "1500", "1500", "1598"}));
  const std::vector<std::string> tput = row_cells(md, "throughput_llama8B_tp1");
  EXPECT_EQ(tput, (std::vector<std::string>{"throughput_llama8B_tp1", "n/a", "200", "90000", "20",
                                            "10", "4500"}));
  // Only serving runs: the serving table alone, as before.
  const std::vector<RunResult> serving_runs = runs_of_kind(runs, "serving");
  EXPECT_EQ(vllm_suite_markdown(serving_runs, MarkdownStyle::kTabulate),
            vllm_serving_markdown(serving_runs, MarkdownStyle::kTabulate));
}

TEST(PythonReadsPandasJson, ThreeKeysColumnToRowOrientation) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0) {
    GTEST_FAIL() << "python3 is needed to check the JSON as vLLM's readers load it";
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / "servebench_import_layouts_pandas.json").string();
  std::ofstream(path) << vllm_pandas_json(load_runs(testdata_path("vllm_kinds")));
  const std::string check =
      "python3 -c \"import json,sys; t=json.load(open(sys.argv[1])); "
      "assert list(t)==['latency','throughput','serving']; "
      "assert all(isinstance(c, dict) and all(isinstance(r, dict) for r in c.values()) "
      "for c in t.values()); "
      "assert list(t['latency']['Test name'])==['0']; "
      "assert list(t['serving']['Test name'])==['0','1']\" " +
      path;
  EXPECT_EQ(std::system(check.c_str()), 0);
  std::filesystem::remove(path);
}

TEST(CompareImported, GuidellmAgainstInferencePerfByOrder) {
  const std::vector<CompareInput> inputs = {
      {"guidellm", load_runs(testdata_path("guidellm/benchmarks.json"))},
      {"inference-perf", load_runs(testdata_path("inference_perf"))}};
  const std::string out = compare_runs(inputs, {}, CompareMatch::kByOrder, CompareFormat::kJson);
  const json j = json::parse(out);
  ASSERT_TRUE(j["rows"].is_array());
  bool saw_ttft = false;
  for (const json& row : j["rows"]) {
    if (row["test_name"] == "benchmarks_synchronous" && row["metric"] == "mean_ttft_ms") {
      saw_ttft = true;
      EXPECT_DOUBLE_EQ(row["values"]["guidellm"].get<double>(), 289.2);
      EXPECT_DOUBLE_EQ(row["values"]["inference-perf"].get<double>(), 210.0);
    }
  }
  EXPECT_TRUE(saw_ttft) << out;
  // The latency tests' figures join the default metrics when a run carries them.
  const std::vector<CompareInput> kinds = {{"a", load_runs(testdata_path("vllm_kinds"))},
                                           {"b", load_runs(testdata_path("vllm_kinds"))}};
  const std::string md = compare_runs(kinds, {}, CompareMatch::kByName, CompareFormat::kMarkdown);
  EXPECT_NE(md.find("percentiles.99"), std::string::npos);
  EXPECT_NE(md.find("tokens_per_second"), std::string::npos);
}

}  // namespace
}  // namespace servebench::report
