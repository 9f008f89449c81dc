// examples/seeds/000, 001 and 002: each example's suite expands as its README documents
// (`servebench suite --dry-run` lists the expected tests, with the seed's load), its quick
// variant is a valid suite of the same tests with less work, and every deployment a test names
// is shipped. The examples themselves are not run here (minutes each): see
// examples/seeds/README.md for their measured times and output.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

namespace fs = std::filesystem;

struct Expanded {
  std::vector<std::string> names;
  std::vector<std::string> commands;
};

// `servebench suite FILES… --dry-run` from the repository root (the suites name deployment files
// from there), split into test names and their commands ("name: servebench …" a line).
Expanded dry_run(const std::vector<std::string>& files) {
  const fs::path before = fs::current_path();
  fs::current_path(SERVEBENCH_SOURCE_DIR);
  TempDir out;
  std::vector<std::string> args = {"suite"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"--output-dir", out.path(), "--dry-run"});
  const Outcome o = run(args, 30);
  fs::current_path(before);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  Expanded e;
  for (const std::string& line : lines_of(o.out)) {
    const size_t colon = line.find(": servebench ");
    if (colon == std::string::npos) continue;
    e.names.push_back(line.substr(0, colon));
    e.commands.push_back(line.substr(colon + 2));
  }
  return e;
}

// The value after `flag ` in a printed command ("" when the flag is not there).
std::string value_of(const std::string& command, const std::string& flag) {
  const size_t at = command.find(flag + " ");
  if (at == std::string::npos) return "";
  const size_t start = at + flag.size() + 1;
  return command.substr(start, command.find(' ', start) - start);
}

// Every command names its deployment, and that file is shipped; so is a dataset file it names.
void expect_deployments_exist(const Expanded& e) {
  const fs::path root(SERVEBENCH_SOURCE_DIR);
  for (const std::string& command : e.commands) {
    const std::string deployment = value_of(command, "--sim-deployment");
    ASSERT_FALSE(deployment.empty()) << command;
    EXPECT_TRUE(fs::exists(root / deployment)) << deployment;
    const std::string dataset = value_of(command, "--dataset-path");
    if (!dataset.empty()) {
      EXPECT_TRUE(fs::exists(root / dataset)) << dataset;
    }
  }
}

// Every command carries `flag`.
void expect_all_have(const Expanded& e, const std::string& flag) {
  for (const std::string& command : e.commands) {
    EXPECT_NE(command.find(flag), std::string::npos) << flag << " not in: " << command;
  }
}

TEST(SeedExamples, Seed000ExpandsToTheSeedsTwelveTests) {
  const std::vector<std::string> expected = {
      "tp8_pp1_qps_01",       "tp8_pp1_qps_04",        "tp8_pp1_qps_16",
      "tp8_pp1_qps_inf",      "tp4_pp2_no_IB_qps_01",  "tp4_pp2_no_IB_qps_04",
      "tp4_pp2_no_IB_qps_16", "tp4_pp2_no_IB_qps_inf", "tp4_pp2_IB_qps_01",
      "tp4_pp2_IB_qps_04",    "tp4_pp2_IB_qps_16",     "tp4_pp2_IB_qps_inf"};
  const Expanded full = dry_run({"examples/seeds/000/suite.yaml"});
  EXPECT_EQ(full.names, expected);
  expect_all_have(full, "--num-prompts 200 ");
  // ShareGPT's lengths (docs/calibration.md), each row's output length as max_tokens.
  expect_all_have(full,
                  "--dataset-name custom --dataset-path "
                  "examples/seeds/000/sharegpt-lengths.jsonl --custom-output-len -1 ");
  expect_deployments_exist(full);
  EXPECT_NE(full.commands[8].find("'gpu_type=Standard_ND96asr_v4-GPUDirect-RDMA-Infiniband x 2'"),
            std::string::npos)
      << full.commands[8];

  const Expanded quick = dry_run({"examples/seeds/000/suite-quick.yaml"});
  EXPECT_EQ(quick.names, expected);
  expect_all_have(quick, "--num-prompts 30 ");
  expect_deployments_exist(quick);
}

TEST(SeedExamples, Seed001ExpandsToOneTestPerDeployment) {
  const std::vector<std::string> expected = {"mps100_single_server", "mps100_two_servers",
                                             "gtx_64_sms", "gtx_100_sms_96_4"};
  const Expanded full = dry_run({"examples/seeds/001/suite.yaml"});
  EXPECT_EQ(full.names, expected);
  expect_all_have(full, "--num-prompts 200 ");
  expect_all_have(full, "--request-rate 20 ");
  expect_all_have(full, "--random-input-len 1000 --random-output-len 100 ");
  expect_deployments_exist(full);

  const Expanded quick = dry_run({"examples/seeds/001/suite-quick.yaml"});
  EXPECT_EQ(quick.names, expected);
  expect_all_have(quick, "--num-prompts 50 ");
  expect_deployments_exist(quick);
}

TEST(SeedExamples, Seed002ExpandsVllmsThreeTestFilesAndTheSpecDecodeTest) {
  const std::vector<std::string> expected = {"latency_llama70B_tp4_pp2_IB",
                                             "throughput_llama70B_tp4_pp2_IB",
                                             "tp4_pp2_optimized_IB_qps_01",
                                             "tp4_pp2_optimized_IB_qps_04",
                                             "tp4_pp2_optimized_IB_qps_16",
                                             "tp4_pp2_optimized_IB_qps_inf",
                                             "serving_llama70B_tp4_pp2_IB_specdecode_qps_2"};
  for (const std::string dir : {"examples/seeds/002/", "examples/seeds/002/quick/"}) {
    SCOPED_TRACE(dir);
    const Expanded e = dry_run(
        {dir + "latency-tests.json", dir + "throughput-tests.json", dir + "serving-tests.json"});
    ASSERT_EQ(e.names, expected);
    EXPECT_EQ(e.commands[0].rfind("servebench latency ", 0), 0u) << e.commands[0];
    EXPECT_NE(e.commands[0].find("--batch-size 8"), std::string::npos) << e.commands[0];
    EXPECT_EQ(e.commands[1].rfind("servebench throughput ", 0), 0u) << e.commands[1];
    EXPECT_NE(e.commands[6].find("--request-rate 2 "), std::string::npos) << e.commands[6];
    EXPECT_NE(e.commands[6].find("002/tp4_pp2_IB_specdecode.yaml"), std::string::npos);
    expect_deployments_exist(e);
    const bool quick = dir.ends_with("quick/");
    EXPECT_NE(e.commands[0].find(quick ? "--num-iters 3" : "--num-iters 15"), std::string::npos)
        << e.commands[0];
    for (size_t i = 2; i < e.commands.size(); ++i) {
      EXPECT_NE(e.commands[i].find(quick ? "--num-prompts 30 " : "--num-prompts 200 "),
                std::string::npos)
          << e.commands[i];
    }
  }
}

}  // namespace
}  // namespace servebench::itest
