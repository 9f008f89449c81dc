// Reading result files: formats told by their keys, Python's Infinity accepted, directories
// read in name order, and every bad file refused with one line naming it.
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

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("servebench_import_test_" + unique())) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  static std::string unique() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string(info->name());
  }
  fs::path path_;
};

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

// Every refusal is a core::Error of kind kInput whose text names the file and says what is wrong.
void expect_refused(const std::string& path, const std::string& what) {
  try {
    load_runs(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(LoadRun, RefusesBadFilesNamingThem) {
  TempDir dir;
  expect_refused(dir.write("cut.json", "{\"completed\": 3,"), "not valid JSON");
  expect_refused(dir.write("empty.json", ""), "not valid JSON");
  expect_refused(dir.write("list.json", "[1, 2]"), "top level is not a JSON object");
  expect_refused(dir.write("other.json", "{\"foo\": 1}"), "not a vLLM or servebench result");
  expect_refused(dir.write("text.json", "{\"completed\": \"ten\", \"request_throughput\": 1}"),
                 "\"completed\" is not a number");
  expect_refused(dir.write("lat.json",
                           "{\"completed\": 1, \"request_throughput\": 1, "
                           "\"latencies\": 3}"),
                 "\"latencies\" is not an array");
  expect_refused(dir.write("benchmarks.json", "{\"benchmarks\": [{\"type_\": \"x\"}]}"),
                 "a GuideLLM benchmarks report");
  expect_refused(dir.write("summary_lifecycle_metrics.json",
                           "{\"load_summary\": {}, \"successes\": {}, \"failures\": {}}"),
                 "an inference-perf lifecycle report");
  expect_refused(dir.path() + "/missing.json", "cannot open the file");
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

}  // namespace
}  // namespace servebench::report
