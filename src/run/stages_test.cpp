// inference-perf's stages as points (stages.cpp): a stage point's rate, count, file name, plan
// and lines, and its "stage" section.
#include "run/stages.h"

#include <gtest/gtest.h>

#include <vector>

#include "run/result_json.h"
#include "run/send_times.h"

namespace servebench::run {
namespace {

// A spec with stages, as the stage flags leave it (stage_flags.cpp); each point's rate and
// count come from enter_stage.
Spec staged(std::vector<schedule::LoadStage> stages,
            schedule::StageArrival arrival = schedule::StageArrival::kConstant,
            double interval_s = 1.0) {
  Spec c;
  c.dataset.name = "random";
  c.stages = std::move(stages);
  c.stage_arrival = arrival;
  c.stage_interval_s = interval_s;
  return c;
}

TEST(StagePoint, ExpandIntoOneRunPerStage) {
  Spec c = staged({{1, 3}, {4, 2}, {2, 1}}, schedule::StageArrival::kPoisson, 0);
  Spec point = c;
  enter_stage(point, 1, "org/model", "20260101-000000");
  EXPECT_EQ(point.stage_index, 1);
  EXPECT_EQ(point.request_rate, 4);
  EXPECT_EQ(point.num_prompts, 8);
  EXPECT_EQ(point.result_filename, "openai-stage_1-4.0qps-model-20260101-000000.json");
  EXPECT_EQ(stage_json(point)["name"], "stage_1");
  EXPECT_EQ(stage_json(point)["requests"], 8);
}

TEST(StagePoint, ElevenStagesPadTheFileIndex) {
  Spec c = staged(std::vector<schedule::LoadStage>(11, {1, 1}));
  Spec point = c;
  enter_stage(point, 3, "m", "d");
  EXPECT_EQ(point.result_filename.rfind("openai-stage_03-", 0), 0u) << point.result_filename;
  EXPECT_EQ(stage_name(3), "stage_3");  // the row name stays inference-perf's
}

TEST(StagePlan, StageTimesAndPromptsFromTheStart) {
  Spec c = staged({{2, 2}, {3, 2}});
  std::vector<dataset::Prompt> prompts(4);
  for (size_t i = 0; i < prompts.size(); ++i) {
    prompts[i].text = "p" + std::to_string(i);
    prompts[i].prompt_tokens = 3;
    prompts[i].output_tokens = 5;
  }
  Spec point = c;
  enter_stage(point, 1, "m", "d");
  const auto plan = stage_plan(point, prompts);
  ASSERT_EQ(plan.size(), 6u);
  EXPECT_EQ(plan[0].prompt, "p0");
  EXPECT_EQ(plan[5].prompt, "p1");  // reused from the start
  EXPECT_EQ(plan[5].max_tokens, 5);
  EXPECT_EQ(plan.back().intended_ns, 2'000'000'000);  // constant: the last at the duration
  EXPECT_NE(stage_traffic_lines(point).find("Stage: stage_1 of 2, 6 requests"), std::string::npos)
      << stage_traffic_lines(point);
}

}  // namespace
}  // namespace servebench::run
