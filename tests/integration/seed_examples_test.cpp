// The seed examples' suites (examples/seeds/003/, 004/: suite.yaml and suite-quick.yaml) expand
// as examples/seeds/README.md documents them: `servebench suite FILE --dry-run` prints one
// command per test, which names its test, its deployment file (present in the folder) and the
// load the seed ran. Nothing is run.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness.h"

namespace servebench::itest {
namespace {

namespace fs = std::filesystem;

const fs::path kSeeds = fs::path(SERVEBENCH_SOURCE_DIR) / "examples" / "seeds";

// test name → its printed command, in suite order.
std::vector<std::pair<std::string, std::string>> dry_run(const std::string& folder,
                                                         const std::string& file,
                                                         const std::string& out) {
  Outcome o = run({"suite", (kSeeds / folder / file).string(), "--output-dir", out, "--dry-run"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  std::vector<std::pair<std::string, std::string>> tests;
  for (const std::string& line : lines_of(o.out)) {
    const size_t colon = line.find(": servebench run ");
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos) continue;
    tests.emplace_back(line.substr(0, colon), line.substr(colon + 2));
    // Every deployment a test names is shipped beside the suite (the suite's folder's path).
    const size_t at = line.find("--sim-deployment ");
    EXPECT_NE(at, std::string::npos) << line;
    if (at == std::string::npos) continue;
    const size_t start = at + 17, end = line.find(' ', start);
    EXPECT_TRUE(fs::exists(kSeeds / folder / line.substr(start, end - start))) << line;
  }
  return tests;
}

bool has(const std::string& command, const std::string& part) {
  return command.find(part) != std::string::npos;
}

void expect_seed003(const std::string& file, const std::string& sweep, const std::string& stages) {
  TempDir dir;
  const auto tests = dry_run("003", file, dir.path());
  ASSERT_EQ(tests.size(), 4u);
  const char* names[] = {"guidellm-no-ib", "guidellm-ib", "inference-perf-no-ib",
                         "inference-perf-ib"};
  for (size_t i = 0; i < 4; ++i) {
    const auto& [name, command] = tests[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(name, names[i]);
    const bool ib = !name.ends_with("no-ib");
    EXPECT_TRUE(has(command, ib ? "/examples/seeds/003/deepseek-v2.5-ib.yaml "
                                : "/examples/seeds/003/deepseek-v2.5-no-ib.yaml "));
    // /metrics and the simulated DCGM exporter, kept over time for the timeline charts.
    EXPECT_TRUE(has(command, "--server-metrics auto --server-metrics-interval 1 --save-detailed"));
    // A profile's or stages' results go to a directory of the test's name.
    EXPECT_TRUE(has(command, "--save-result --result-dir " + dir.path() + "/" + name + " "));
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
  TempDir dir;
  const auto tests = dry_run("004", file, dir.path());
  const char* deployments[] = {"dynamo-3p1d", "dynamo-6p1d", "dynamo-12p1d", "vllm-v0-4xtp4",
                               "vllm-v1-4xtp4"};
  ASSERT_EQ(tests.size(), 5 * pairs.size() * concurrencies.size());
  size_t i = 0;
  for (const char* deployment : deployments) {
    for (const auto& [isl, osl] : pairs) {
      for (int c : concurrencies) {
        const auto& [name, command] = tests[i++];
        const std::string pair = std::to_string(isl) + "-" + std::to_string(osl);
        EXPECT_EQ(name, std::string(deployment) + "_" + pair + "_c" + std::to_string(c));
        EXPECT_TRUE(has(command, std::string("/examples/seeds/004/") + deployment + ".yaml "));
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
