// `servebench suite` end to end: small suites against the embedded simulator (a few prompts,
// 5 ms TTFT) so each test takes a second or two.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* kSuite = R"(description: a small suite against the embedded simulator
defaults:
  labels:
    gpu_type: SimGPU
  client_parameters:
    num_prompts: 4
    random_input_len: 16
    random_output_len: 4
    sim_ttft_ms: 5
    sim_itl_ms: 1
    disable_tqdm: true
tests:
  - test_name: tp8_pp1
    labels: {deployment: one-node}
    qps_list: ["01", inf]
  - test_name: conc
    qps_list: [inf]
    max_concurrency_list: [1, 2]
)";

std::string write_suite(const TempDir& dir, const std::string& text,
                        const std::string& name = "suite.yaml") {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::vector<std::string> kNames = {"tp8_pp1_qps_01", "tp8_pp1_qps_inf",
                                         "conc_qps_inf_concurrency_1",
                                         "conc_qps_inf_concurrency_2"};

// A test that benchmarks several targets at once (seed 001: a deployment with two frontends;
// here two embedded simulators) writes one result per target; the suite counts it as passed,
// names each target's row apart in the summary and keeps the combined figures beside them.
TEST(Suite, ATestOfSeveralTargetsPassesWithARowPerTarget) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const char* suite = R"(tests:
  - test_name: two
    client_parameters: {num_prompts: 3, random_input_len: 16, random_output_len: 4,
                        sim_ttft_ms: 5, sim_itl_ms: 1, sim_instances: 2, temperature: 0,
                        request_rate: inf, disable_tqdm: true}
)";
  const Outcome o = run({"suite", write_suite(dir, suite), "--output-dir", out}, 120);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count(o.out, "WARNING: no"), 0u) << o.out;
  for (const char* name : {"two-target1", "two-target2"}) {
    const json r = json::parse(read_file(out + "/" + name + ".json"));
    EXPECT_EQ(r["test_name"], name);
    EXPECT_EQ(r["completed"], 3);
  }
  EXPECT_TRUE(fs::exists(out + "/two.combined.json"));
  const std::string md = read_file(out + "/summary.md");
  EXPECT_NE(md.find("| two-target1 "), std::string::npos) << md;
  EXPECT_NE(md.find("| two-target2 "), std::string::npos) << md;
  EXPECT_EQ(md.find("Failed tests"), std::string::npos) << md;
  const std::string status = read_file(out + "/suite_status.jsonl");
  EXPECT_NE(status.find("\"status\":\"ok\""), std::string::npos) << status;
  // --resume finds the test complete from its targets' files.
  const Outcome again =
      run({"suite", write_suite(dir, suite), "--output-dir", out, "--resume"}, 60);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("two: result exists, skipped"), std::string::npos) << again.err;
}

TEST(Suite, RunsExpandedTestsWritesResultsAndSummary) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  Outcome o = run({"suite", write_suite(dir, kSuite), "--output-dir", out}, 120);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  for (const auto& name : kNames) {
    ASSERT_TRUE(fs::exists(out + "/" + name + ".json")) << name << "\n" << o.err;
    json r = json::parse(read_file(out + "/" + name + ".json"));
    EXPECT_EQ(r["test_name"], name);
    EXPECT_EQ(r["gpu_type"], "SimGPU");
    EXPECT_EQ(r["completed"], 4);
    EXPECT_EQ(count(o.out, "Running test case " + name + " ["), 1u) << o.out;
  }
  json first = json::parse(read_file(out + "/tp8_pp1_qps_01.json"));
  EXPECT_EQ(first["deployment"], "one-node");
  EXPECT_DOUBLE_EQ(first["request_rate"].get<double>(), 1.0);
  json conc = json::parse(read_file(out + "/conc_qps_inf_concurrency_2.json"));
  EXPECT_FALSE(conc.contains("deployment"));
  EXPECT_EQ(conc["max_concurrency"], 2);

  std::string md = read_file(out + "/summary.md");
  for (const auto& name : kNames) EXPECT_NE(md.find("| " + name + " "), std::string::npos) << md;
  EXPECT_NE(md.find("1xSimGPU"), std::string::npos) << md;
  EXPECT_EQ(md.find("Failed tests"), std::string::npos) << md;
  EXPECT_NE(o.out.find(md), std::string::npos);  // printed as well
  // No test gives a temperature: the suite says so once, not once per test (issue 17).
  EXPECT_EQ(count(o.out, "WARNING: no"), 1u) << o.out;
  EXPECT_NE(o.out.find("WARNING: no temperature given in 4 of 4 tests (the first: "
                       "tp8_pp1_qps_01), so requests carry none"),
            std::string::npos)
      << o.out;
  json summary = json::parse(read_file(out + "/summary.json"));
  ASSERT_TRUE(summary["serving"].is_object()) << summary.dump();
  ASSERT_FALSE(summary["serving"].empty());
  EXPECT_EQ(summary["serving"].begin()->size(), 4u) << summary.dump();
  EXPECT_EQ(lines_of(read_file(out + "/suite_status.jsonl")).size() >= 4, true);
}

TEST(Suite, ResumeRunsOnlyTestsWithoutACompleteResult) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  std::string suite = write_suite(dir, kSuite);
  ASSERT_EQ(run({"suite", suite, "--output-dir", out}, 120).exit_code, 0);
  std::string kept = read_file(out + "/tp8_pp1_qps_01.json");
  fs::remove(out + "/tp8_pp1_qps_inf.json");
  std::ofstream(out + "/conc_qps_inf_concurrency_1.json") << "{\"completed\": 4, \"dur";  // torn

  Outcome o = run({"suite", suite, "--output-dir", out, "--resume"}, 120);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count(o.out, "Running test case "), 2u) << o.out;
  EXPECT_NE(o.out.find("Running test case tp8_pp1_qps_inf ["), std::string::npos);
  EXPECT_NE(o.out.find("Running test case conc_qps_inf_concurrency_1 ["), std::string::npos);
  EXPECT_EQ(count(o.err, "skipped (--resume)"), 2u) << o.err;
  EXPECT_EQ(read_file(out + "/tp8_pp1_qps_01.json"), kept);  // not rerun
  EXPECT_EQ(json::parse(read_file(out + "/tp8_pp1_qps_inf.json"))["completed"], 4);
  EXPECT_EQ(json::parse(read_file(out + "/conc_qps_inf_concurrency_1.json"))["completed"], 4);
  std::string md = read_file(out + "/summary.md");
  for (const auto& name : kNames) EXPECT_NE(md.find("| " + name + " "), std::string::npos) << md;
}

// A test with a GuideLLM profile makes a result per benchmark: they go to a directory of the
// test's name, the summary has them all, and --resume skips the directory once complete.
TEST(Suite, AProfileTestSavesItsBenchmarksInADirectoryOfItsOwn) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const std::string suite = write_suite(dir, R"(tests:
  - test_name: rates
    client_parameters: {profile: constant, rate: "2,4", duration: 1, random_input_len: 16,
                        random_output_len: 4, sim_ttft_ms: 5, sim_itl_ms: 1, disable_tqdm: true}
)");
  Outcome o = run({"suite", suite, "--output-dir", out}, 60);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  size_t results = 0;
  for (const auto& entry : fs::directory_iterator(out + "/rates")) {
    if (entry.path().extension() != ".json") continue;
    json r = json::parse(read_file(entry.path().string()));
    EXPECT_EQ(r["test_name"], "rates");
    ++results;
  }
  EXPECT_EQ(results, 2u);
  const std::string md = read_file(out + "/summary.md");
  EXPECT_EQ(count(md, "| rates "), 2u) << md;
  Outcome again = run({"suite", suite, "--output-dir", out, "--resume"}, 60);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("rates: result exists, skipped (--resume)"), std::string::npos)
      << again.err;
}

TEST(Suite, AFailedTestIsRecordedAndTheSuiteGoesOn) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  std::string text = std::string(R"(defaults:
  client_parameters: {num_prompts: 4, random_input_len: 16, random_output_len: 4, disable_tqdm: true}
tests:
  - test_name: down
    client_parameters: {base_url: "http://127.0.0.1:)") +
                     std::to_string(free_port()) + R"("}
  - test_name: up
    client_parameters: {sim_ttft_ms: 5, sim_itl_ms: 1}
)";
  Outcome o = run({"suite", write_suite(dir, text), "--output-dir", out}, 60);
  EXPECT_EQ(o.exit_code, 1) << o.out << o.err;
  EXPECT_NE(o.err.find("servebench: suite: down failed (exit code 4); going on"), std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(out + "/down.json"));
  EXPECT_TRUE(fs::exists(out + "/up.json")) << o.err;
  std::string md = read_file(out + "/summary.md");
  EXPECT_NE(md.find("| up "), std::string::npos) << md;
  EXPECT_NE(md.find("Failed tests:\n\n- down: exit code 4\n"), std::string::npos) << md;
  std::string status = read_file(out + "/suite_status.jsonl");
  EXPECT_NE(status.find(R"("status":"failed","test_name":"down")"), std::string::npos) << status;
}

TEST(Suite, CtrlCEndsTheSuiteAndResumeContinuesThere) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  std::string suite = write_suite(dir, R"(defaults:
  client_parameters: {num_prompts: 100, random_input_len: 16, random_output_len: 4,
                      sim_ttft_ms: 5, sim_itl_ms: 1, disable_tqdm: true}
tests:
  - test_name: slow
    qps_list: [20]
  - test_name: fast
)");
  Outcome o =
      run(RunSpec{{"suite", suite, "--output-dir", out}, 60, "Starting main benchmark", 0.5, 0, 0});
  EXPECT_EQ(o.exit_code, 130) << o.out << o.err;
  EXPECT_NE(o.err.find("servebench: suite: interrupted at slow_qps_20"), std::string::npos)
      << o.err;
  EXPECT_FALSE(fs::exists(out + "/slow_qps_20.json"));  // the partial result is not kept
  EXPECT_FALSE(fs::exists(out + "/fast.json"));
  std::string status = read_file(out + "/suite_status.jsonl");
  EXPECT_NE(status.find(R"("status":"interrupted","test_name":"slow_qps_20")"), std::string::npos)
      << status;
  EXPECT_NE(status.find(R"("status":"not run","test_name":"fast")"), std::string::npos) << status;

  Outcome resumed = run({"suite", suite, "--output-dir", out, "--resume"}, 60);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(count(resumed.out, "Running test case "), 2u) << resumed.out;
  EXPECT_EQ(json::parse(read_file(out + "/slow_qps_20.json"))["completed"], 100);
  EXPECT_TRUE(fs::exists(out + "/fast.json"));
}

TEST(Suite, BadSuiteFilesGiveOneLineErrorsAndRunNothing) {
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"tests:\n  - test_name: a\n    client_parameters: {num_prompts: abc}\n",
       "tests[0].client_parameters.num_prompts: "},
      {"defaults:\n  client_parameters: {no_such_flag: 1}\ntests:\n  - test_name: a\n",
       "defaults.client_parameters.no_such_flag: unknown flag (see servebench run --help)"},
      {"tests:\n  - test_name: a\n    client_parameters: {num_prompts: [1, 2]}\n",
       "tests[0].client_parameters.num_prompts: lists are not allowed here"},
      {"tests:\n  - test_name: a\n    qps_list: [1, -2]\n",
       "tests[0].qps_list[1]: not a positive number or inf: '-2'"},
      {"tests:\n  - test_name: a\n  - test_name: b\n    client_parameters: {sim_mode: warp}\n",
       "tests[1].client_parameters.sim_mode: unknown mode 'warp'"},
      {"tests: {\n", "suite.yaml: line "},
  };
  for (const auto& c : cases) {
    TempDir dir;
    std::string out = dir.path() + "/out";
    Outcome o = run({"suite", write_suite(dir, c.text), "--output-dir", out}, 30);
    EXPECT_EQ(o.exit_code, 3) << c.text << o.err;
    EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
    EXPECT_EQ(o.err.rfind("servebench: " + dir.path() + "/suite.yaml: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(c.error), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(out)) << c.text;
  }
  Outcome missing = run({"suite", "/nonexistent/suite.yaml"}, 30);
  EXPECT_EQ(missing.exit_code, 3);
  Outcome no_file = run({"suite"}, 30);
  EXPECT_EQ(no_file.exit_code, 2);
}

TEST(Suite, DryRunPrintsCommandsAndRunsNothing) {
  TempDir dir;
  std::string out = dir.path() + "/out";
  Outcome o = run({"suite", write_suite(dir, kSuite), "--output-dir", out, "--dry-run"}, 30);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto lines = lines_of(o.out);
  lines.erase(std::remove(lines.begin(), lines.end(), ""), lines.end());
  ASSERT_EQ(lines.size(), 4u) << o.out;
  EXPECT_EQ(lines[0].rfind("tp8_pp1_qps_01: servebench run --num-prompts 4 ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("--request-rate 01 --save-result --result-dir " + out +
                          " --result-filename tp8_pp1_qps_01.json --metadata "
                          "test_name=tp8_pp1_qps_01 gpu_type=SimGPU deployment=one-node"),
            std::string::npos)
      << lines[0];
  EXPECT_FALSE(fs::exists(out));
}

// The printed commands never show a credential: not in a dry run, not before a test runs.
TEST(Suite, PrintedCommandsHideSecrets) {
  TempDir dir;
  const std::string out = dir.path() + "/out";
  const std::string path = write_suite(dir, R"(tests:
  - test_name: a
    client_parameters: {num_prompts: 2, random_input_len: 8, random_output_len: 2,
                        sim_ttft_ms: 1, sim_itl_ms: 1, disable_tqdm: true,
                        header: ["Authorization=Bearer SECRET1", "X-Api-Key=SECRET2",
                                 "X-Request-Id=r1"]}
  - test_name: b
    client_parameters: {num_prompts: 2, base_url: "http://user:SECRET3@127.0.0.1:9", model: m}
)");
  Outcome dry = run({"suite", path, "--output-dir", out, "--dry-run"}, 30);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ((dry.out + dry.err).find("SECRET"), std::string::npos) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("--header 'Authorization=<redacted>' 'X-Api-Key=<redacted>' "
                         "X-Request-Id=r1 "),
            std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("--base-url 'http://user:<redacted>@127.0.0.1:9' "), std::string::npos)
      << dry.out;
  // Run for real: test a against the embedded simulator, b against a closed port.
  Outcome o = run({"suite", path, "--output-dir", out}, 60);
  EXPECT_NE(o.out.find("Client command: servebench run "), std::string::npos) << o.out;
  EXPECT_EQ((o.out + o.err).find("SECRET"), std::string::npos) << o.out << o.err;
  EXPECT_EQ(json::parse(read_file(out + "/a.json"))["completed"], 2);
}

}  // namespace
}  // namespace servebench::itest
