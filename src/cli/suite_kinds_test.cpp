// vLLM's latency and throughput tests in suite files (suite_file.cpp): their "parameters",
// kinds told by the name as vLLM's suite does, engine parameters left out, and the command each
// test runs.
#include <gtest/gtest.h>

#include "cli/suite.h"
#include "cli/suite_test_support.h"
#include "core/error.h"

namespace servebench::cli::suite {
namespace {

// vLLM's latency-tests.json (.buildkite/nightly-benchmarks/tests/), as it is.
constexpr const char* kLatencyTests = R"([
    {
        "test_name": "latency_llama8B_tp1",
        "parameters": {
            "model": "meta-llama/Meta-Llama-3-8B",
            "tensor_parallel_size": 1,
            "load_format": "dummy",
            "num_iters_warmup": 5,
            "num_iters": 15
        }
    },
    {
        "test_name": "latency_llama70B_tp4",
        "parameters": {
            "model": "meta-llama/Meta-Llama-3-70B-Instruct",
            "tensor_parallel_size": 4,
            "load_format": "dummy",
            "num-iters-warmup": 5,
            "num-iters": 15
        }
    }
])";

TEST(SuiteKinds, VllmLatencyTestsFileAsItIs) {
  const std::vector<suite::Test> tests = parse(kLatencyTests, "latency-tests.json");
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].kind, "latency");
  EXPECT_EQ(tests[0].name, "latency_llama8B_tp1");
  // The engine's tensor_parallel_size and load_format are left out.
  EXPECT_EQ(tests[0].run_args,
            (std::vector<std::string>{"--model", "meta-llama/Meta-Llama-3-8B", "--num-iters-warmup",
                                      "5", "--num-iters", "15"}));
  EXPECT_EQ(tests[1].run_args[2], "--num-iters-warmup");  // vLLM wrote it with dashes
  EXPECT_EQ(full_run_args(tests[0], "out"),
            (std::vector<std::string>{"latency", "--model", "meta-llama/Meta-Llama-3-8B",
                                      "--num-iters-warmup", "5", "--num-iters", "15",
                                      "--output-json", "out/latency_llama8B_tp1.json", "--metadata",
                                      "test_name=latency_llama8B_tp1"}));
  EXPECT_EQ(tests[0].flag_origin.at("--num-iters"), "tests[0].parameters.num_iters");
}

TEST(SuiteKinds, ThroughputByNameOrKindServingUnchanged) {
  const std::vector<suite::Test> tests = parse(R"(
tests:
  - test_name: throughput_llama8B_tp1
    labels: {gpu_type: H100}
    parameters: {model: m, tensor_parallel_size: 1, dataset: ./sharegpt.json, num_prompts: 200,
                 backend: vllm}
  - test_name: batch8
    kind: latency
    client_parameters: {batch_size: 8, num_iters: 3}
  - test_name: serving_x
    client_parameters: {num_prompts: 10}
    qps_list: [1]
)",
                                               "suite.yaml");
  ASSERT_EQ(tests.size(), 3u);
  EXPECT_EQ(tests[0].kind, "throughput");
  EXPECT_EQ(tests[0].run_args,
            (std::vector<std::string>{"--model", "m", "--dataset", "./sharegpt.json",
                                      "--num-prompts", "200", "--backend", "vllm"}));
  const std::vector<std::string> args = full_run_args(tests[0], "d");
  EXPECT_EQ(args.front(), "throughput");
  EXPECT_EQ(args.back(), "gpu_type=H100");
  EXPECT_EQ(tests[1].kind, "latency");
  EXPECT_EQ(full_run_args(tests[1], "d").front(), "latency");
  EXPECT_EQ(tests[2].kind, "serving");
  EXPECT_EQ(tests[2].name, "serving_x_qps_1");
  EXPECT_EQ(full_run_args(tests[2], "d").front(), "run");
}

TEST(SuiteKinds, MistakesNameTheKey) {
  EXPECT_EQ(error_of("[{test_name: lat, parameters: {num_iters: 3}}]"),
            "suite.yaml: tests[0].test_name: 'lat': with \"parameters\", name it latency_… or "
            "throughput_… (as vLLM's suite does), or give kind");
  EXPECT_EQ(error_of("[{test_name: latency_a, parameters: {}, qps_list: [1]}]"),
            "suite.yaml: tests[0].qps_list: only for serving tests");
  EXPECT_EQ(error_of("[{test_name: a, kind: offline}]"),
            "suite.yaml: tests[0].kind: 'offline' is not a test kind (serving, latency, "
            "throughput)");
  EXPECT_EQ(error_of("[{test_name: latency_a, parameters: {output_json: x.json}}]"),
            "suite.yaml: tests[0].parameters.output_json: set by the suite (see "
            "--output-dir)");
}

}  // namespace
}  // namespace servebench::cli::suite
