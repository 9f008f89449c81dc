#include "run/shard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/clock.h"
#include "core/error.h"
#include "run/send_times.h"

namespace servebench::run {
namespace {

std::vector<dataset::Prompt> prompts(size_t n) {
  std::vector<dataset::Prompt> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i].text = "prompt " + std::to_string(i);
    out[i].prompt_tokens = static_cast<int32_t>(10 + i);
    out[i].output_tokens = static_cast<int32_t>(5 + i % 7);
  }
  return out;
}

// `conversations` conversations of 1 to 3 turns, in order.
std::vector<dataset::Prompt> conversations(int conversations) {
  std::vector<dataset::Prompt> out;
  for (int c = 0; c < conversations; ++c) {
    for (int t = 0; t <= c % 3; ++t) {
      dataset::Prompt p;
      p.text = "c" + std::to_string(c) + "t" + std::to_string(t);
      p.prompt_tokens = 4;
      p.output_tokens = 3;
      p.conversation = c;
      p.turn = t;
      out.push_back(p);
    }
  }
  return out;
}

Spec rate_spec(double rate, uint64_t seed) {
  Spec c;
  c.request_rate = rate;
  c.seed = seed;
  return c;
}

TEST(ShardPlan, TheShardsTogetherAreTheWholePlanEachRequestOnce) {
  const Spec c = rate_spec(5, 7);
  const std::vector<client::PlannedRequest> whole = make_plan(c, prompts(100));
  for (int n = 1; n <= 4; ++n) {
    std::map<uint64_t, client::PlannedRequest> seen;
    for (int k = 0; k < n; ++k) {
      for (const client::PlannedRequest& r : shard_plan(whole, k, n)) {
        EXPECT_EQ(r.index % static_cast<uint64_t>(n), static_cast<uint64_t>(k));
        EXPECT_TRUE(seen.emplace(r.index, r).second) << "request " << r.index << " twice";
      }
    }
    ASSERT_EQ(seen.size(), whole.size()) << n << " shards";
    for (const client::PlannedRequest& r : whole) {
      const client::PlannedRequest& s = seen.at(r.index);
      EXPECT_EQ(s.intended_ns, r.intended_ns);  // the one plan's send times, not a new draw
      EXPECT_EQ(s.prompt, r.prompt);
      EXPECT_EQ(s.prompt_tokens, r.prompt_tokens);
      EXPECT_EQ(s.max_tokens, r.max_tokens);
    }
  }
}

TEST(ShardPlan, AddingShardsLeavesAShardsRequestsThoseOfTheWholePlan) {
  // Shard 0 of 2 and shard 0 of 4: both subsets of the same whole plan, so the requests they
  // share are identical whatever the shard count.
  const std::vector<client::PlannedRequest> whole = make_plan(rate_spec(3, 1), prompts(40));
  const auto of2 = shard_plan(whole, 0, 2), of4 = shard_plan(whole, 0, 4);
  for (const client::PlannedRequest& r : of4) {
    auto it =
        std::find_if(of2.begin(), of2.end(), [&](const auto& q) { return q.index == r.index; });
    ASSERT_NE(it, of2.end());
    EXPECT_EQ(it->intended_ns, r.intended_ns);
    EXPECT_EQ(it->prompt, r.prompt);
  }
}

TEST(ShardPlan, AConversationStaysInOneShardWithItsLinks) {
  const std::vector<client::PlannedRequest> whole = make_plan(rate_spec(2, 3), conversations(20));
  std::map<int64_t, int> shard_of;
  size_t total = 0;
  for (int k = 0; k < 3; ++k) {
    const auto mine = shard_plan(whole, k, 3);
    total += mine.size();
    std::set<uint64_t> indices;
    for (const auto& r : mine) indices.insert(r.index);
    for (const auto& r : mine) {
      auto [it, fresh] = shard_of.emplace(r.conversation, k);
      EXPECT_EQ(it->second, k) << "conversation " << r.conversation << " in two shards";
      if (r.follows >= 0) {
        EXPECT_TRUE(indices.count(static_cast<uint64_t>(r.follows)));
      }
    }
  }
  EXPECT_EQ(total, whole.size());
  EXPECT_EQ(shard_of.size(), 20u);
}

TEST(ShardShare, CapsSplitWithTheRemainderOnTheFirstShards) {
  EXPECT_EQ(shard_share(7, 0, 3), 3);
  EXPECT_EQ(shard_share(7, 1, 3), 2);
  EXPECT_EQ(shard_share(7, 2, 3), 2);
  EXPECT_EQ(shard_share(0, 1, 3), 0);  // no cap stays no cap
  EXPECT_EQ(shard_share(5, 0, 0), 5);  // unsharded
  for (int n = 1; n <= 6; ++n) {
    for (int total = n; total <= 40; ++total) {
      int sum = 0;
      for (int k = 0; k < n; ++k) sum += shard_share(total, k, n);
      EXPECT_EQ(sum, total) << total << " over " << n;
    }
  }
}

Environment env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string usage_error(const std::string& value, const Environment& env) {
  try {
    parse_shard(value, env);
  } catch (const core::Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParseShard, ExplicitValueWinsOverTheEnvironment) {
  const Shard s = parse_shard("2/5", env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "3"}}));
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  EXPECT_NE(usage_error("5/5", env_of({})).find("--shard"), std::string::npos);
  EXPECT_NE(usage_error("1/0", env_of({})), "");
  EXPECT_NE(usage_error("3", env_of({})), "");
  EXPECT_NE(usage_error("a/3", env_of({})), "");
}

TEST(ParseShard, KubernetesIndexedJobNeedsTheCount) {
  Shard s =
      parse_shard("auto", env_of({{"JOB_COMPLETION_INDEX", "3"}, {"SERVEBENCH_SHARDS", "4"}}));
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 4);
  s = parse_shard("auto/8", env_of({{"JOB_COMPLETION_INDEX", "3"}, {"SERVEBENCH_SHARDS", "4"}}));
  EXPECT_EQ(s.count, 8);  // the flag's N wins
  EXPECT_NE(usage_error("auto", env_of({{"JOB_COMPLETION_INDEX", "3"}})).find("SERVEBENCH_SHARDS"),
            std::string::npos);
  EXPECT_NE(
      usage_error("auto", env_of({{"JOB_COMPLETION_INDEX", "4"}, {"SERVEBENCH_SHARDS", "4"}})), "");
}

TEST(ParseShard, SlurmArrayIdsCountFromTheirMinimumByTheirStep) {
  // --array=1-7:2 → ids 1, 3, 5, 7: id 5 is the third task.
  const Shard s = parse_shard("auto", env_of({{"SLURM_ARRAY_TASK_ID", "5"},
                                              {"SLURM_ARRAY_TASK_MIN", "1"},
                                              {"SLURM_ARRAY_TASK_STEP", "2"},
                                              {"SLURM_ARRAY_TASK_COUNT", "4"},
                                              {"SLURM_PROCID", "0"},
                                              {"SLURM_NTASKS", "1"}}));
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_NE(usage_error("auto", env_of({{"SLURM_ARRAY_TASK_ID", "4"},
                                        {"SLURM_ARRAY_TASK_MIN", "1"},
                                        {"SLURM_ARRAY_TASK_STEP", "2"},
                                        {"SLURM_ARRAY_TASK_COUNT", "4"}}))
                .find("SLURM_ARRAY_TASK_ID"),
            std::string::npos);
}

TEST(ParseShard, SlurmTasksAndNothingToReadFrom) {
  const Shard s = parse_shard("auto", env_of({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "3"}}));
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 3);
  EXPECT_NE(usage_error("auto", env_of({})).find("no shard in the environment"), std::string::npos);
  EXPECT_NE(usage_error("auto", env_of({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "3"}}))
                .find("SLURM_PROCID"),
            std::string::npos);
}

TEST(PlanHash, SameForTheSameRunChangesWithWhatShapesThePlan) {
  Spec c = rate_spec(4, 2);
  c.max_concurrency = 6;
  const auto plan = make_plan(c, prompts(30));
  const std::string h = plan_hash(c, plan);
  EXPECT_EQ(h.size(), 16u);
  Spec shard1 = c;  // another shard of the same run: only its shard differs
  shard1.shard = {1, 3, std::nullopt};
  EXPECT_EQ(plan_hash(shard1, make_plan(shard1, prompts(30))), h);
  Spec other = c;
  other.max_concurrency = 7;
  EXPECT_NE(plan_hash(other, make_plan(other, prompts(30))), h);
  other = c;
  other.seed = 3;  // other send times
  EXPECT_NE(plan_hash(other, make_plan(other, prompts(30))), h);
  EXPECT_NE(plan_hash(c, make_plan(c, prompts(31))), h);
}

TEST(StartAt, UnixSecondsAndIso8601) {
  EXPECT_EQ(parse_start_at_ns("1795683600"), 1795683600'000'000'000);
  EXPECT_EQ(parse_start_at_ns("1795683600.25"), 1795683600'250'000'000);
  EXPECT_EQ(parse_start_at_ns("2026-11-26T09:00:00Z"), 1795683600'000'000'000);
  EXPECT_EQ(parse_start_at_ns("2026-11-26T09:00:00"), 1795683600'000'000'000);
  EXPECT_EQ(parse_start_at_ns("2026-11-26T10:00:00.5+01:00"), 1795683600'500'000'000);
  EXPECT_EQ(parse_start_at_ns("2026-11-26 08:30:00-0030"), 1795683600'000'000'000);
  for (const char* bad :
       {"", "soon", "12:00", "2026-13-01T00:00:00Z", "2026-11-26T09:00:00X", "1.2.3", "-5"}) {
    EXPECT_THROW(parse_start_at_ns(bad), core::Error) << bad;
  }
}

TEST(StartShard, WaitsForTheInstantOrSaysHowLateItIs) {
  std::atomic<bool> stop{false};
  const int64_t wall_now = core::wall_ns_at_mono(core::mono_ns());
  Shard s{0, 2, wall_now + 50'000'000};
  ShardStart start = start_shard(s, stop);
  EXPECT_GE(start.t0_wall_ns, *s.start_at_ns);
  EXPECT_EQ(start.started_late_ns, 0);
  EXPECT_NEAR(static_cast<double>(start.clock_offset_ns),
              static_cast<double>(start.t0_wall_ns - start.t0_mono_ns), 1.0);
  s.start_at_ns = wall_now - 2'000'000'000;  // two seconds ago
  start = start_shard(s, stop);
  EXPECT_GE(start.started_late_ns, 2'000'000'000);
}

TEST(CheckShardable, RefusesWhatCannotBeSplitExactly) {
  Spec c;
  c.max_concurrencies = {8, 2};
  EXPECT_NO_THROW(check_shardable(c));  // unsharded: anything goes
  c.shard = {0, 3, std::nullopt};
  EXPECT_THROW(check_shardable(c), core::Error);  // 2 streams over 3 shards
  c.max_concurrencies = {8, 3};
  EXPECT_NO_THROW(check_shardable(c));
  c.limits.profile = LoadProfile::kSweep;
  EXPECT_THROW(check_shardable(c), core::Error);
  c.limits.profile = LoadProfile::kSynchronous;
  EXPECT_THROW(check_shardable(c), core::Error);
  c.limits.profile = LoadProfile::kNone;
  c.search = SearchPlan{};
  EXPECT_THROW(check_shardable(c), core::Error);
}

}  // namespace
}  // namespace servebench::run
