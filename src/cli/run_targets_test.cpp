#include "cli/run_targets.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"

namespace servebench::cli::run {
namespace {

auto given_flags(std::set<std::string> flags) {
  return [flags](const char* flag) { return flags.count(flag) > 0; };
}

// The error's one line, for checking what it names (and what it must not show).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(BaseUrls, CommaListOrRepeatedFlag) {
  EXPECT_EQ(parse_base_urls("http://a:8000/"), std::vector<std::string>{"http://a:8000"});
  EXPECT_EQ(parse_base_urls("http://a:8000,https://b:8001/v1//"),
            (std::vector<std::string>{"http://a:8000", "https://b:8001/v1"}));
  // CLI11 joins a repeated --base-url with newlines.
  EXPECT_EQ(parse_base_urls("http://a:1\nhttp://b:2"),
            (std::vector<std::string>{"http://a:1", "http://b:2"}));
}

TEST(BaseUrls, BadItemNamesTheFlagWithoutCredentials) {
  const std::string e = error_of([] { parse_base_urls("http://a:1,ftp://user:secret@b:2"); });
  EXPECT_NE(e.find("--base-url: must start with http:// or https://"), std::string::npos) << e;
  EXPECT_EQ(e.find("secret"), std::string::npos) << e;
  EXPECT_NE(error_of([] { parse_base_urls("http://a:1,,http://b:2"); }).find("empty URL"),
            std::string::npos);
}

RunConfig two_servers() {
  RunConfig c;
  c.embedded = false;
  c.target_urls = {"http://u:pw@a:1", "http://b:2"};
  c.base_url = c.target_urls.front();
  c.request_rates = {4};
  c.max_concurrencies = {0};
  return c;
}

TEST(TargetFlags, ModelListNamesEachTarget) {
  RunConfig c = two_servers();
  c.model = "m1,m2";
  apply_target_flags("1", given_flags({"--base-url", "--model"}), c);
  EXPECT_EQ(c.target_models, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_TRUE(runs_several_targets(c));
  EXPECT_EQ(target_config(c, 1).model, "m2");

  RunConfig one_for_all = two_servers();
  one_for_all.model = "m";
  apply_target_flags("1", given_flags({"--base-url", "--model"}), one_for_all);
  EXPECT_TRUE(one_for_all.target_models.empty());
  EXPECT_EQ(target_config(one_for_all, 1).model, "m");
}

TEST(TargetFlags, BadCombinationsAreOneLineErrors) {
  RunConfig c = two_servers();
  c.model = "m1,m2,m3";
  EXPECT_NE(error_of([&] {
              apply_target_flags("1", given_flags({"--model"}), c);
            }).find("--model: 3 model names for 2 targets"),
            std::string::npos);
  RunConfig sweep = two_servers();
  sweep.request_rates = {1, 2};
  EXPECT_NE(
      error_of([&] { apply_target_flags("1", given_flags({}), sweep); }).find("--request-rate:"),
      std::string::npos);
  RunConfig server = two_servers();
  EXPECT_NE(error_of([&] {
              apply_target_flags("2", given_flags({"--sim-instances"}), server);
            }).find("--sim-instances:"),
            std::string::npos);
  RunConfig one = two_servers();
  one.target_urls.pop_back();
  one.model = "m1\nm2";  // --model repeated
  EXPECT_NE(error_of([&] {
              apply_target_flags("1", given_flags({"--model"}), one);
            }).find("--model: given more than once"),
            std::string::npos);
  RunConfig embedded;
  embedded.embedded = true;
  EXPECT_NE(error_of([&] {
              apply_target_flags("0", given_flags({"--sim-instances"}), embedded);
            }).find("--sim-instances"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              apply_target_flags("x", given_flags({"--sim-instances"}), embedded);
            }).find("--sim-instances"),
            std::string::npos);
}

TEST(TargetFlags, SimInstancesMakeEmbeddedTargets) {
  RunConfig c;
  c.embedded = true;
  c.request_rates = {1};
  c.max_concurrencies = {0};
  apply_target_flags("3", given_flags({"--sim-instances"}), c);
  EXPECT_EQ(c.sim_instances, 3);
  EXPECT_TRUE(runs_several_targets(c));
  RunConfig single;
  single.embedded = true;
  apply_target_flags("1", given_flags({}), single);
  EXPECT_FALSE(runs_several_targets(single));
}

TEST(TargetConfig, OwnUrlSeedLabelAndFiles) {
  RunConfig c = two_servers();
  c.seed = 10;
  c.dataset.random.seed = 10;
  c.records_path = "out/run.records.jsonl";
  c.result_filename = "res.json";
  const RunConfig t = target_config(c, 1);
  EXPECT_EQ(t.base_url, "http://b:2");
  EXPECT_EQ(t.seed, 11u);
  EXPECT_EQ(t.dataset.random.seed, 11u);
  EXPECT_EQ(t.dataset.sharegpt.file.seed, 11u);
  EXPECT_EQ(t.sim.seed, 11u);
  EXPECT_EQ(t.label, "openai-target2");
  EXPECT_EQ(t.records_path, "out/run-target2.records.jsonl");
  EXPECT_EQ(t.result_filename, "res-target2.json");
  EXPECT_TRUE(t.disable_tqdm);
  EXPECT_FALSE(runs_several_targets(t));  // one target's own run
  const RunConfig first = target_config(c, 0);
  EXPECT_EQ(first.seed, 10u);
  // The result names its target without the credentials of the URL.
  EXPECT_EQ(target_json(first)["url"], "http://a:1");
}

TEST(Combined, SumsOverTheCommonWallTime) {
  const std::vector<nlohmann::json> results = {{{"completed", 200},
                                                {"failed", 1},
                                                {"total_input_tokens", 2000},
                                                {"total_output_tokens", 400},
                                                {"duration", 10.0}},
                                               {{"completed", 100},
                                                {"failed", 0},
                                                {"total_input_tokens", 1000},
                                                {"total_output_tokens", 200},
                                                {"duration", 12.0}}};
  const CombinedFigures f = combine_results(results);
  EXPECT_EQ(f.targets, 2u);
  EXPECT_EQ(f.completed, 300);
  EXPECT_EQ(f.failed, 1);
  EXPECT_DOUBLE_EQ(f.wall_s, 12.0);
  EXPECT_DOUBLE_EQ(f.request_throughput, 25.0);
  EXPECT_DOUBLE_EQ(f.output_throughput, 50.0);
  EXPECT_DOUBLE_EQ(f.total_token_throughput, 300.0);
  const std::string block = combined_console_block(f, results);
  EXPECT_NE(block.find("Combined Result (2 targets"), std::string::npos) << block;
  EXPECT_NE(block.find("Successful requests:                     300"), std::string::npos) << block;
  EXPECT_NE(block.find("Request throughput (req/s):              25.00"), std::string::npos)
      << block;
}

}  // namespace
}  // namespace servebench::cli::run
