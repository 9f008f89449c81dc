// inference-perf's stages as flags (stage_flags.cpp): the forms --stages takes, and its checks.
#include "cli/stage_flags.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <set>

#include "core/error.h"

namespace servebench::cli {
namespace {

auto given_flags(std::set<std::string> flags) {
  return [flags](const char* flag) { return flags.count(flag) > 0; };
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(Stages, RateDurationList) {
  const StagesSpec s = parse_stages("1:60,5:60,2.5:4");
  ASSERT_EQ(s.stages.size(), 3u);
  EXPECT_EQ(s.stages[1].rate, 5);
  EXPECT_EQ(s.stages[2].rate, 2.5);
  EXPECT_EQ(s.stages[2].duration_s, 4);
  EXPECT_FALSE(s.arrival);
}

TEST(Stages, InlineYamlOrJson) {
  const StagesSpec yaml = parse_stages("[{rate: 1, duration: 3}, {rate: 2, duration: 3}]");
  ASSERT_EQ(yaml.stages.size(), 2u);
  EXPECT_EQ(yaml.stages[1].rate, 2);
  const StagesSpec json = parse_stages(
      R"({"load": {"type": "poisson", "interval": 0.5, "stages": [{"rate": 4, "duration": 2}]}})");
  ASSERT_EQ(json.stages.size(), 1u);
  EXPECT_EQ(json.arrival, schedule::StageArrival::kPoisson);
  EXPECT_EQ(json.interval_s, 0.5);
}

TEST(Stages, InferencePerfConfigFile) {
  const std::string path = ::testing::TempDir() + "/stages_config.yaml";
  {
    std::ofstream out(path);
    out << "load:\n  type: constant\n  interval: 2\n  stages:\n  - rate: 1\n    duration: 30\n"
           "  - rate: 8\n    duration: 30\n";
  }
  const StagesSpec s = parse_stages(path);
  ASSERT_EQ(s.stages.size(), 2u);
  EXPECT_EQ(s.stages[1].rate, 8);
  EXPECT_EQ(s.arrival, schedule::StageArrival::kConstant);
  EXPECT_EQ(s.interval_s, 2);
  std::remove(path.c_str());
}

TEST(Stages, BadValuesNameTheFlag) {
  for (const char* bad : {"1-60", "1:60,", "1:0", "0:10", "0.1:5", "x:5", "1:2:3", "[{rate: 1}]",
                          "[]", "{stages: 3}", "[{rate: 1, duration: 2"}) {
    const std::string e = usage_error([&] { parse_stages(bad); });
    EXPECT_EQ(e.rfind("--stages: ", 0), 0u) << bad << " → " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  EXPECT_NE(usage_error([] { parse_stage_arrival("burst"); }).find("--stage-arrival"),
            std::string::npos);
}

run::Spec base() {
  run::Spec c;
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.max_concurrencies = {0};
  c.dataset.name = "random";
  return c;
}

TEST(StageFlags, ExpandIntoOneRunPerStage) {
  run::Spec c = base();
  apply_stage_flags({"1:3,4:2,2:1", "poisson", "0"},
                    given_flags({"--stages", "--stage-arrival", "--stage-interval"}), c);
  EXPECT_EQ(c.request_rates, (std::vector<double>{1, 4, 2}));
  EXPECT_EQ(c.num_prompts, 8);  // the largest stage: 4 × 2
  EXPECT_EQ(c.stage_arrival, schedule::StageArrival::kPoisson);
  EXPECT_EQ(c.stage_interval_s, 0);
}

TEST(StageFlags, ConflictsAreOneLineErrors) {
  run::Spec c = base();
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"1:3", "", ""}, given_flags({"--stages", "--request-rate"}), c);
            }).find("--request-rate:"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"1:3", "", ""}, given_flags({"--stages", "--num-prompts"}), c);
            }).find("--num-prompts:"),
            std::string::npos);
  EXPECT_NE(
      usage_error([&] {
        apply_stage_flags({"1:3", "", ""}, given_flags({"--stages", "--ramp-up-strategy"}), c);
      }).find("--ramp-up-strategy: --stages sets each stage's rate"),
      std::string::npos);
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"", "poisson", ""}, given_flags({"--stage-arrival"}), c);
            }).find("--stage-arrival: applies only with --stages"),
            std::string::npos);
  run::Spec sweep = base();
  sweep.max_concurrencies = {1, 2};
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"1:3", "", ""}, given_flags({"--stages"}), sweep);
            }).find("--max-concurrency:"),
            std::string::npos);
  run::Spec trace = base();
  trace.dataset.name = "mooncake";
  trace.self_timed = true;  // as run_command.cpp sets it without --no-self-timed
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"1:3", "", ""}, given_flags({"--stages"}), trace);
            }).find("--stages:"),
            std::string::npos);
  run::Spec interval = base();
  EXPECT_NE(usage_error([&] {
              apply_stage_flags({"1:3", "", "-1"}, given_flags({"--stages", "--stage-interval"}),
                                interval);
            }).find("--stage-interval:"),
            std::string::npos);
}

}  // namespace
}  // namespace servebench::cli
