// Reading and expanding suite files (suite_file.cpp): vLLM's naming, defaults, labels, and the
// one-line errors naming the key.
#include <gtest/gtest.h>

#include "cli/suite.h"
#include "cli/suite_test_support.h"
#include "core/error.h"

namespace servebench::cli::suite {
namespace {

std::vector<std::string> names(const std::vector<Test>& tests) {
  std::vector<std::string> out;
  for (const auto& t : tests) out.push_back(t.name);
  return out;
}

TEST(SuiteFile, ExpandsQpsAndConcurrencyListsWithVllmNames) {
  auto tests = parse(R"(
defaults:
  labels: {gpu_type: H100}
  client_parameters: {num_prompts: 200, ignore_eos: true, disable_tqdm: false}
tests:
  - test_name: tp8_pp1
    labels: {deployment: one-node}
    qps_list: ["01", 4, inf]
  - test_name: conc
    client_parameters: {num_prompts: 10}
    qps_list: [inf]
    max_concurrency_list: [1, 2]
  - test_name: plain
)",
                     "suite.yaml");
  EXPECT_EQ(names(tests), (std::vector<std::string>{"tp8_pp1_qps_01", "tp8_pp1_qps_4",
                                                    "tp8_pp1_qps_inf", "conc_qps_inf_concurrency_1",
                                                    "conc_qps_inf_concurrency_2", "plain"}));
  EXPECT_EQ(tests[0].run_args, (std::vector<std::string>{"--num-prompts", "200", "--ignore-eos",
                                                         "--request-rate", "01"}));
  EXPECT_EQ(tests[0].labels, (std::vector<std::pair<std::string, std::string>>{
                                 {"gpu_type", "H100"}, {"deployment", "one-node"}}));
  EXPECT_EQ(tests[4].run_args,
            (std::vector<std::string>{"--num-prompts", "10", "--ignore-eos", "--request-rate",
                                      "inf", "--max-concurrency", "2"}));
  EXPECT_EQ(tests[4].flag_origin.at("--num-prompts"), "tests[1].client_parameters.num_prompts");
  EXPECT_EQ(tests[4].flag_origin.at("--ignore-eos"), "defaults.client_parameters.ignore_eos");
  EXPECT_EQ(tests[4].flag_origin.at("--max-concurrency"), "tests[1].max_concurrency_list[1]");
  EXPECT_EQ(tests[5].run_args, (std::vector<std::string>{"--num-prompts", "200", "--ignore-eos"}));

  auto args = full_run_args(tests[0], "out");
  std::vector<std::string> tail(args.end() - 9, args.end());
  EXPECT_EQ(tail,
            (std::vector<std::string>{
                "--save-result", "--result-dir", "out", "--result-filename", "tp8_pp1_qps_01.json",
                "--metadata", "test_name=tp8_pp1_qps_01", "gpu_type=H100", "deployment=one-node"}));
}

// A deployment file ships beside its suite (examples/seeds/003/): a relative path is the suite
// file's folder's; a profile's results go to a directory of the test's name.
TEST(SuiteFile, DeploymentsBesideTheSuiteAndProfileResultsInADirectory) {
  const char* text = R"(tests:
  - test_name: guidellm-ib
    client_parameters: {sim_deployment: ib.yaml, profile: sweep, duration: 30}
  - test_name: abs
    client_parameters: {sim_deployment: /d/ib.yaml}
)";
  auto tests = parse(text, "examples/seeds/003/suite.yaml");
  EXPECT_EQ(tests[0].run_args[1], "examples/seeds/003/ib.yaml");
  EXPECT_EQ(tests[1].run_args[1], "/d/ib.yaml");
  EXPECT_EQ(parse(text, "suite.yaml")[0].run_args[1], "ib.yaml");
  EXPECT_TRUE(saves_many(tests[0]));
  EXPECT_FALSE(saves_many(tests[1]));
  auto args = full_run_args(tests[0], "out");
  std::vector<std::string> tail(args.end() - 5, args.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"--save-result", "--result-dir", "out/guidellm-ib",
                                            "--metadata", "test_name=guidellm-ib"}));
}

TEST(SuiteFile, ReadsVllmServingTestsJson) {
  auto tests = parse(R"([{"test_name": "serving_llama8B_tp1_sharegpt",
    "qps_list": [1, 4, 16, "inf"],
    "server_parameters": {"model": "meta-llama/Llama-3.1-8B-Instruct", "tensor_parallel_size": 1},
    "client_parameters": {"model": "meta-llama/Llama-3.1-8B-Instruct", "backend": "vllm",
                          "dataset_name": "sharegpt", "num_prompts": 200, "ignore_eos": ""}}])",
                     "serving-tests.json");
  EXPECT_EQ(names(tests),
            (std::vector<std::string>{
                "serving_llama8B_tp1_sharegpt_qps_1", "serving_llama8B_tp1_sharegpt_qps_4",
                "serving_llama8B_tp1_sharegpt_qps_16", "serving_llama8B_tp1_sharegpt_qps_inf"}));
  EXPECT_EQ(tests[0].run_args.back(), "1");
  EXPECT_NE(std::find(tests[0].run_args.begin(), tests[0].run_args.end(), "--ignore-eos"),
            tests[0].run_args.end());
}

TEST(SuiteFile, ErrorsNameTheFileAndTheKey) {
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n    client_parameters: {num_prompts: [1, 2]}\n"),
            "suite.yaml: tests[0].client_parameters.num_prompts: lists are not allowed here; use "
            "qps_list or max_concurrency_list");
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n  - test_name: b\n    qps_list: [1, x]\n"),
            "suite.yaml: tests[1].qps_list[1]: not a positive number or inf: 'x'");
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n    max_concurrency_list: [0]\n"),
            "suite.yaml: tests[0].max_concurrency_list[0]: not a positive whole number: '0'");
  EXPECT_EQ(error_of("tests:\n  - qps_list: [1]\n"), "suite.yaml: tests[0]: needs a test_name");
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n    qps: [1]\n"),
            "suite.yaml: tests[0].qps: unknown key (expected test_name, kind, labels, "
            "client_parameters or parameters, qps_list, max_concurrency_list)");
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n    client_parameters: {result_dir: x}\n"),
            "suite.yaml: tests[0].client_parameters.result_dir: set by the suite (see "
            "--output-dir)");
  EXPECT_EQ(
      error_of("tests:\n  - test_name: a\n    qps_list: [1]\n    client_parameters: "
               "{request_rate: 2}\n"),
      "suite.yaml: tests[0].client_parameters.request_rate: given with qps_list; use one of them");
  EXPECT_EQ(error_of("tests:\n  - test_name: a\n    qps_list: [1]\n  - test_name: a_qps\n"
                     "    qps_list: [1]\n  - test_name: a\n    qps_list: [1]\n"),
            "suite.yaml: tests[2]: test name 'a_qps_1' is also made by tests[0]");
  EXPECT_EQ(error_of("tests:\n  - test_name: a/b\n"),
            "suite.yaml: tests[0].test_name: use letters, digits, '_', '-' and '.' (it names the "
            "result file)");
  EXPECT_EQ(error_of("tests: []\n"), "suite.yaml: tests: no tests");
  EXPECT_NE(error_of("tests: [\n").find("suite.yaml: line "), std::string::npos);
}

TEST(SuiteFile, TextAfterTheTopLevelValueIsRefusedWithItsPlace) {
  // vLLM's json.load refuses these ("Extra data"); yaml-cpp would read the first value only.
  EXPECT_EQ(error_of("[{\"test_name\": \"a\"}] trailing\n"),
            "suite.yaml: line 1, column 22 (byte 21): text after the suite's top-level value; a "
            "suite file holds one");
  EXPECT_EQ(error_of("[{\"test_name\": \"a\"}]\n{\"test_name\": \"b\"}\n"),
            "suite.yaml: line 2, column 1 (byte 21): text after the suite's top-level value; a "
            "suite file holds one");
  EXPECT_NO_THROW(parse("[{\"test_name\": \"a\"}]\n\n# a comment\n", "suite.json"));
}

TEST(SuiteFile, AStrayCommaIsRefusedRatherThanReadForever) {
  // yaml-cpp's LoadAll reads "," as one empty document after another until memory runs out
  // (bench/fuzz/suite_file_fuzz found it with a 467-byte file); the reader stops at the second.
  for (const char* text : {",", "[{\"test_name\": \"a\"}],", ",\n,\n,\n"}) {
    EXPECT_NE(error_of(text).find("suite.yaml: line 1"), std::string::npos) << text;
  }
}

TEST(SuiteFile, PrintedCommandHidesHeaderSecretsAndUrlPasswords) {
  const auto tests = parse(R"(
tests:
  - test_name: a
    client_parameters:
      base_url: "http://user:SECRET1@127.0.0.1:21000"
      header: ["Authorization=Bearer SECRET2", "X-Auth-Token=SECRET3", "X-Request-Id=r1"]
      model: m
)",
                           "suite.yaml");
  ASSERT_EQ(tests.size(), 1u);
  const std::string line = command_line(full_run_args(tests[0], "out"));
  EXPECT_EQ(line.find("SECRET"), std::string::npos) << line;
  EXPECT_NE(line.find("--base-url 'http://user:<redacted>@127.0.0.1:21000' "), std::string::npos)
      << line;
  EXPECT_NE(line.find("--header 'Authorization=<redacted>' 'X-Auth-Token=<redacted>' "
                      "X-Request-Id=r1 "),
            std::string::npos)
      << line;
  // Only --header values are read as headers; the rest is quoted as it is.
  EXPECT_NE(line.find("--model m "), std::string::npos) << line;
  EXPECT_EQ(command_line({"run", "--header=Cookie: c=1", "--metadata", "note=it's"}),
            "servebench run '--header=Cookie: <redacted>' --metadata 'note=it'\\''s'");
}

}  // namespace
}  // namespace servebench::cli::suite
