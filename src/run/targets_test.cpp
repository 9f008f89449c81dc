// Several targets (targets.cpp): each target's own spec, its "target" section, and the combined
// figures.
#include "run/targets.h"

#include <gtest/gtest.h>

#include "run/result_json.h"

namespace servebench::run {
namespace {

Spec two_servers() {
  Spec c;
  c.embedded = false;
  c.target_urls = {"http://u:pw@a:1", "http://b:2"};
  c.base_url = c.target_urls.front();
  c.request_rates = {4};
  c.max_concurrencies = {0};
  return c;
}

TEST(TargetConfig, ModelListNamesEachTarget) {
  Spec c = two_servers();
  c.target_models = {"m1", "m2"};  // as --model "m1,m2" leaves it (target_flags.cpp)
  c.model = "m1";
  EXPECT_EQ(target_config(c, 1).model, "m2");

  Spec one_for_all = two_servers();
  one_for_all.model = "m";
  EXPECT_EQ(target_config(one_for_all, 1).model, "m");
}

TEST(TargetConfig, OwnUrlSeedLabelAndFiles) {
  Spec c = two_servers();
  c.seed = 10;
  c.dataset.random.seed = 10;
  c.records_path = "out/run.records.jsonl";
  c.result_filename = "res.json";
  const Spec t = target_config(c, 1);
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
  const Spec first = target_config(c, 0);
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
}  // namespace servebench::run
