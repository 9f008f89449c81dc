// Engine features compositions use: imported KV (add_with_kv), speculative decoding, counters,
// a custom StepCost.
#include <gtest/gtest.h>

#include "core/error.h"
#include "sim/model/engine.h"

namespace servebench::sim {
namespace {

constexpr int64_t kUs = 1'000;

EngineProfile small_profile() {
  EngineProfile p;
  p.name = "test";
  p.max_num_seqs = 8;
  p.max_num_batched_tokens = 64;
  p.block_size = 4;
  p.num_gpu_blocks = 1000;
  p.step_overhead_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_seq_us = 100;
  p.per_context_token_us = 0;
  return p;
}

// Records every batch it prices; each step costs 1 ms.
class RecordingCost final : public StepCost {
 public:
  mutable std::vector<StepBatch> batches;
  int64_t step_ns(const StepBatch& b) const override {
    batches.push_back(b);
    return 1000 * kUs;
  }
};

std::vector<TokenEvent> drain(TimingModel& model) {
  std::vector<TokenEvent> out;
  for (int i = 0; i < 100000; ++i) {
    auto due = model.next_due_ns();
    if (!due) return out;
    model.pop_due(*due, out);
  }
  ADD_FAILURE() << "still busy";
  return out;
}

TEST(EngineImportedKv, ARequestWithImportedKvComputesOnlyTheRestOfItsPrompt) {
  auto engine = make_engine(small_profile(), make_linear_cost(small_profile()));
  engine->add_with_kv(1, {40, 2}, 0, 39);
  auto out = drain(*engine);
  ASSERT_EQ(out.size(), 2u);
  // One token left of the prompt: 1000 + 10 us, not 1000 + 400.
  EXPECT_EQ(out[0].due_ns, 1010 * kUs);
  EXPECT_EQ(engine->counters().prompt_tokens, 1u);
  EXPECT_EQ(engine->stats().kv_cache_usage, 0.0);
}

TEST(EngineImportedKv, ImportedKvOfTheWholePromptIsRefused) {
  auto engine = make_engine(small_profile(), nullptr);
  EXPECT_THROW(engine->add_with_kv(1, {40, 2}, 0, 40), core::Error);
}

TEST(EngineSpecDecode, AcceptanceRateOneEmitsDraftsPlusOneTokensPerStep) {
  auto cost = std::make_shared<RecordingCost>();
  auto engine = make_engine(small_profile(), cost, SpecDecode{3, 1.0, 1});
  engine->add(1, {8, 9}, 0);
  auto out = drain(*engine);
  ASSERT_EQ(out.size(), 9u);
  // Prefill samples token 0; then 4 tokens a step (3 drafts accepted + 1): 4, 4.
  EXPECT_EQ(engine->stats().steps, 3u);
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(out[k].due_ns, out[1].due_ns);
  EXPECT_TRUE(out.back().last);
  for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(out[k].token_index, static_cast<int>(k));
  ASSERT_EQ(cost->batches.size(), 3u);
  EXPECT_EQ(cost->batches[1].decode_tokens, 4);
  EXPECT_EQ(cost->batches[1].draft_tokens, 3);
  EngineCounters c = engine->counters();
  EXPECT_EQ(c.spec_drafts, 2u);
  EXPECT_EQ(c.spec_draft_tokens, 6u);
  EXPECT_EQ(c.spec_accepted_tokens, 6u);
  EXPECT_EQ(c.generation_tokens, 9u);
}

TEST(EngineSpecDecode, TokensPerStepRiseWithTheAcceptanceRate) {
  // Expected tokens per decode step with k drafts each accepted with probability a (given
  // the ones before): 1 + a + a² + … + a^k.
  for (double rate : {0.0, 0.5, 0.8}) {
    auto engine = make_engine(small_profile(), nullptr, SpecDecode{4, rate, 7});
    for (uint64_t id = 0; id < 40; ++id) engine->add(id, {4, 101}, 0);
    drain(*engine);
    EngineCounters c = engine->counters();
    double per_step = 1.0 + static_cast<double>(c.spec_accepted_tokens) / c.spec_drafts;
    double expected = 1 + rate + rate * rate + rate * rate * rate + rate * rate * rate * rate;
    EXPECT_NEAR(per_step, expected, 0.05 * expected) << rate;
    EXPECT_EQ(c.generation_tokens, 40u * 101u);
    ASSERT_EQ(c.spec_accepted_per_position.size(), 4u);
    // Position i is reached only through i accepted before it.
    for (size_t i = 1; i < 4; ++i) {
      EXPECT_LE(c.spec_accepted_per_position[i], c.spec_accepted_per_position[i - 1]);
    }
  }
}

TEST(EngineSpecDecode, DraftsNeverOvershootTheOutput) {
  auto engine = make_engine(small_profile(), nullptr, SpecDecode{5, 1.0, 1});
  engine->add(1, {4, 3}, 0);
  auto out = drain(*engine);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(engine->counters().spec_draft_tokens, 1u);  // 2 left after token 0: 1 draft
  EXPECT_EQ(engine->stats().kv_cache_usage, 0.0);
}

TEST(EngineCountersTest, BusyTimeAndBusyAtFollowTheSteps) {
  auto engine = make_engine(small_profile(), std::make_shared<RecordingCost>());
  EXPECT_FALSE(engine->busy_at(0));
  engine->add(1, {4, 2}, 5000 * kUs);
  EXPECT_FALSE(engine->busy_at(4999 * kUs));
  EXPECT_TRUE(engine->busy_at(5000 * kUs));
  EXPECT_EQ(engine->outstanding(), 1);
  drain(*engine);
  EXPECT_EQ(engine->counters().busy_ns, 2000 * kUs);
  EXPECT_EQ(engine->counters().finished_requests, 1u);
  EXPECT_EQ(engine->outstanding(), 0);
  EXPECT_FALSE(engine->busy_at(1'000'000 * kUs));
}

TEST(EngineCost, TheBatchCarriesAttentionPairsAndSamplingSequences) {
  auto cost = std::make_shared<RecordingCost>();
  auto engine = make_engine(small_profile(), cost);
  engine->add(1, {100, 2}, 0);  // chunks of 64 then 36
  drain(*engine);
  ASSERT_EQ(cost->batches.size(), 3u);
  EXPECT_EQ(cost->batches[0].prefill_attention_pairs, 64 * 64 / 2);
  EXPECT_EQ(cost->batches[0].sampling_seqs, 0);
  EXPECT_EQ(cost->batches[1].prefill_attention_pairs, 36 * 64 + 36 * 36 / 2);
  EXPECT_EQ(cost->batches[1].sampling_seqs, 1);
  EXPECT_EQ(cost->batches[2].decode_seqs, 1);
  EXPECT_EQ(cost->batches[2].decode_context_tokens, 100);
  EXPECT_EQ(cost->batches[1].start_ns, 1000 * kUs);
}

}  // namespace
}  // namespace servebench::sim
