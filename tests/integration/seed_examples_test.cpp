// examples/seeds/NNN: each example's suite expands as its README documents (`servebench suite
// --dry-run` lists the expected tests, with the seed's load), its quick variant is a valid suite
// of the same tests with less work, and every deployment a test names is shipped. The examples
// themselves are not run here (minutes each): see examples/seeds/README.md for their measured times
// and output.
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
  std::string out;  // the --output-dir given (gone by now: only its name is compared)
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
  e.out = out.path();
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

bool has(const std::string& command, const std::string& part) {
  return command.find(part) != std::string::npos;
}

void expect_seed003(const std::string& file, const std::string& sweep, const std::string& stages) {
  const Expanded e = dry_run({"examples/seeds/003/" + file});
  expect_deployments_exist(e);
  ASSERT_EQ(e.names.size(), 4u);
  const char* names[] = {"guidellm-no-ib", "guidellm-ib", "inference-perf-no-ib",
                         "inference-perf-ib"};
  for (size_t i = 0; i < 4; ++i) {
    const std::string& name = e.names[i];
    const std::string& command = e.commands[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(name, names[i]);
    const bool ib = !name.ends_with("no-ib");
    EXPECT_TRUE(has(command, ib ? "examples/seeds/003/deepseek-v2.5-ib.yaml "
                                : "examples/seeds/003/deepseek-v2.5-no-ib.yaml "));
    // /metrics and the simulated DCGM exporter, kept over time for the timeline charts.
    EXPECT_TRUE(has(command, "--server-metrics auto --server-metrics-interval 1 --save-detailed"));
    // A profile's or stages' results go to a directory of the test's name.
    EXPECT_TRUE(has(command, "--save-result --result-dir " + e.out + "/" + name + " "));
    EXPECT_FALSE(has(command, "--result-filename"));
    if (i < 2) {
      // The label is the Metadata block's tag, as the seed's.
      EXPECT_TRUE(has(command, std::string("--label ") + (ib ? "infiniband" : "no-infiniband") +
                                   " --random-input-len 256 " + sweep))
          << command;
    } else {
      EXPECT_TRUE(has(command, "--random-input-len 2 --random-output-len 30 --stages " + stages))
          << command;
    }
  }
}

TEST(SeedExamples, Seed003SuiteIsTheSeedsSweepsAndStages) {
  expect_seed003("suite.yaml", "--random-output-len 128 --profile sweep --duration 30 --save",
                 "1:30,2:30,4:30,8:30,16:30,32:30,64:30,128:30,256:30,275:30 ");
}

TEST(SeedExamples, Seed003QuickSuiteShrinksDurationsOutputsAndStages) {
  expect_seed003("suite-quick.yaml",
                 "--random-output-len 32 --profile sweep --duration 8 --max-concurrency 64 --save",
                 "1:5,4:5,16:5,64:5 ");
}

void expect_seed004(const std::string& file, const std::vector<std::pair<int, int>>& pairs,
                    const std::vector<int>& concurrencies, int prompts_per_stream) {
  const Expanded e = dry_run({"examples/seeds/004/" + file});
  expect_deployments_exist(e);
  const char* deployments[] = {"dynamo-3p1d", "dynamo-6p1d", "dynamo-12p1d", "vllm-v0-4xtp4",
                               "vllm-v1-4xtp4"};
  ASSERT_EQ(e.names.size(), 5 * pairs.size() * concurrencies.size());
  size_t i = 0;
  for (const char* deployment : deployments) {
    for (const auto& [isl, osl] : pairs) {
      for (int c : concurrencies) {
        const std::string& name = e.names[i];
        const std::string& command = e.commands[i++];
        const std::string pair = std::to_string(isl) + "-" + std::to_string(osl);
        EXPECT_EQ(name, std::string(deployment) + "_" + pair + "_c" + std::to_string(c));
        EXPECT_TRUE(has(command, std::string("examples/seeds/004/") + deployment + ".yaml "));
        // The label names the table: "## Benchmark Result (ISL:OSL=3000:150)".
        EXPECT_TRUE(has(command,
                        "--label ISL:OSL=" + std::to_string(isl) + ":" + std::to_string(osl) +
                            " --random-input-len " + std::to_string(isl) + " --random-output-len " +
                            std::to_string(osl) + " --max-concurrency " + std::to_string(c) +
                            " --num-prompts " + std::to_string(prompts_per_stream * c) + " "))
            << command;
        EXPECT_TRUE(has(command, "--random-range-ratio 0 --ignore-eos")) << command;
        EXPECT_TRUE(has(command, "--result-filename " + name + ".json ")) << command;
      }
    }
  }
}

TEST(SeedExamples, Seed004SuiteIsTheSeedsConcurrencySweeps) {
  expect_seed004("suite.yaml", {{3000, 150}, {1000, 1000}, {500, 1000}, {2500, 100}},
                 {1, 2, 4, 8, 16, 32, 64, 128}, 10);
}

TEST(SeedExamples, Seed004QuickSuiteKeepsTheShortPairsAtThreeConcurrencies) {
  expect_seed004("suite-quick.yaml", {{3000, 150}, {2500, 100}}, {1, 8, 64}, 1);
}

}  // namespace
}  // namespace servebench::itest
