#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

constexpr int64_t kUs = 1'000;

// Round numbers so every expectation below is hand-computable:
// step_us = 1000 + 10 * prefill tokens + 100 * decoding seqs + 1 * context tokens.
EngineProfile test_profile() {
  EngineProfile p;
  p.name = "test";
  p.max_num_seqs = 4;
  p.max_num_batched_tokens = 64;
  p.chunked_prefill = true;
  p.block_size = 4;
  p.num_gpu_blocks = 1000;
  p.step_overhead_us = 1000;
  p.per_prefill_token_us = 10;
  p.per_decode_seq_us = 100;
  p.per_context_token_us = 1;
  return p;
}

// Runs one step (everything due at the next due time).
std::vector<TokenEvent> step(TimingModel& model) {
  std::vector<TokenEvent> out;
  if (auto due = model.next_due_ns()) model.pop_due(*due, out);
  return out;
}

std::vector<TokenEvent> drain(TimingModel& model, int max_steps = 100000) {
  std::vector<TokenEvent> out;
  for (int i = 0; i < max_steps; ++i) {
    auto due = model.next_due_ns();
    if (!due) return out;
    model.pop_due(*due, out);
  }
  ADD_FAILURE() << "model still busy after " << max_steps << " steps";
  return out;
}

std::map<uint64_t, std::vector<TokenEvent>> by_request(const std::vector<TokenEvent>& events) {
  std::map<uint64_t, std::vector<TokenEvent>> m;
  for (const TokenEvent& e : events) m[e.request_id].push_back(e);
  return m;
}

// Every request got tokens 0..n-1 in order, only the last marked last.
void expect_complete(const std::vector<TokenEvent>& events, uint64_t id, int32_t n) {
  auto m = by_request(events);
  ASSERT_EQ(m[id].size(), static_cast<size_t>(n)) << "request " << id;
  for (int32_t k = 0; k < n; ++k) {
    EXPECT_EQ(m[id][k].token_index, k) << "request " << id;
    EXPECT_EQ(m[id][k].last, k == n - 1) << "request " << id;
  }
}

TEST(EngineModel, OneRequestAloneTtftIsOnePrefillStepTpotOneDecodeStep) {
  auto model = make_engine_model(test_profile());
  model->add(1, {20, 3}, 5000 * kUs);
  // Prefill 20 tokens, context 20: 1000 + 200 + 20 = 1220 us after arrival.
  EXPECT_EQ(model->next_due_ns(), (5000 + 1220) * kUs);
  auto out = drain(*model);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].due_ns, (5000 + 1220) * kUs);
  // Decodes: 1000 + 100 + context 21, then 1000 + 100 + 22.
  EXPECT_EQ(out[1].due_ns - out[0].due_ns, 1121 * kUs);
  EXPECT_EQ(out[2].due_ns - out[1].due_ns, 1122 * kUs);
  expect_complete(out, 1, 3);
  ModelStats st = model->stats();
  EXPECT_EQ(st.steps, 3u);
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.waiting, 0);
  EXPECT_EQ(st.kv_cache_usage, 0.0);
  EXPECT_EQ(st.preemptions, 0u);
}

TEST(EngineModel, IdleEngineStartsAStepWhenARequestArrives) {
  auto model = make_engine_model(test_profile());
  model->add(1, {4, 1}, 0);
  auto first = drain(*model);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].due_ns, (1000 + 40 + 4) * kUs);
  model->add(2, {4, 1}, 50'000 * kUs);  // long after the engine went idle
  auto second = drain(*model);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].due_ns, (50'000 + 1044) * kUs);
}

TEST(EngineModel, ChunkedPrefillSplitsALongPromptUnderTheTokenBudget) {
  auto model = make_engine_model(test_profile());
  model->add(1, {150, 2}, 0);
  // Chunks of 64, 64 and 22 tokens; context grows 64, 128, 150.
  EXPECT_TRUE(step(*model).empty());
  EXPECT_EQ(model->stats().kv_cache_usage, 16.0 / 1000);  // 64 tokens = 16 blocks
  EXPECT_TRUE(step(*model).empty());
  auto first = step(*model);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].due_ns, (1704 + 1768 + 1370) * kUs);
  EXPECT_EQ(model->stats().steps, 3u);
  EXPECT_EQ(model->stats().kv_cache_usage, 38.0 / 1000);  // ceil(150 / 4)
}

TEST(EngineModel, DecodesShareTheBudgetWithAPrefillChunk) {
  auto model = make_engine_model(test_profile());
  model->add(1, {4, 10}, 0);
  model->add(2, {200, 2}, 0);
  // Step 1: A's 4 prompt tokens + B's first 60-token chunk: 1000 + 640 + 64 = 1704 us.
  auto s1 = step(*model);
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_EQ(s1[0].request_id, 1u);
  EXPECT_EQ(s1[0].due_ns, 1704 * kUs);
  // Step 2: A decodes (context 5), B takes the other 63: 1000 + 100 + 630 + 5 + 123.
  auto s2 = step(*model);
  ASSERT_EQ(s2.size(), 1u);
  EXPECT_EQ(s2[0].due_ns, (1704 + 1858) * kUs);
  // B's 200 = 60 + 63 + 63 + 14: its first token comes with A's fourth.
  EXPECT_EQ(step(*model).size(), 1u);
  auto s4 = step(*model);
  ASSERT_EQ(s4.size(), 2u);
  EXPECT_EQ(s4[0].request_id, 1u);
  EXPECT_EQ(s4[0].token_index, 3);
  EXPECT_EQ(s4[1].request_id, 2u);
  EXPECT_EQ(s4[1].token_index, 0);
  auto rest = drain(*model);
  rest.insert(rest.begin(), s4.begin(), s4.end());
  EXPECT_EQ(rest.size(), 2u + 6 + 1);
}

TEST(EngineModel, WithoutChunkingAPromptWaitsForAWholeBudget) {
  EngineProfile p = test_profile();
  p.chunked_prefill = false;
  auto model = make_engine_model(p);
  EXPECT_NE(model->rejection_reason({150, 2}), "");  // can never fit a 64-token step
  EXPECT_THROW(model->add(9, {150, 2}, 0), core::Error);
  model->add(1, {40, 2}, 0);
  model->add(2, {40, 2}, 0);
  auto s1 = step(*model);  // only A: B's 40 do not fit the 24 left
  ASSERT_EQ(s1.size(), 1u);
  EXPECT_EQ(s1[0].request_id, 1u);
  EXPECT_EQ(model->stats().waiting, 1);
  auto s2 = step(*model);  // A decodes, B prefills whole
  ASSERT_EQ(s2.size(), 2u);
  EXPECT_EQ(s2[1].request_id, 2u);
  EXPECT_EQ(s2[1].token_index, 0);
}

TEST(EngineModel, MaxNumSeqsCapsRunningAndTheRestWaitInFcfsOrder) {
  auto model = make_engine_model(test_profile());  // max_num_seqs 4
  // Requests 1..4 finish after 2, 3, 4, 5 tokens; 5 and 6 wait.
  for (uint64_t id = 1; id <= 6; ++id) {
    model->add(id, {4, static_cast<int32_t>(id <= 4 ? id + 1 : 3)}, 0);
  }
  std::vector<uint64_t> first_token_order;
  std::vector<TokenEvent> all;
  int finished = 0;
  for (int s = 0; s < 100 && model->next_due_ns(); ++s) {
    auto events = step(*model);
    ModelStats st = model->stats();
    EXPECT_LE(st.running, 4);
    for (const TokenEvent& e : events) {
      if (e.token_index == 0) first_token_order.push_back(e.request_id);
      finished += e.last;
      all.push_back(e);
    }
    EXPECT_EQ(st.running + st.waiting, 6 - finished);
    if (s == 0) {
      EXPECT_EQ(st.running, 4);
      EXPECT_EQ(st.waiting, 2);
    }
  }
  EXPECT_EQ(first_token_order, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  // Request 1 finishes at step 2, so 5 starts in step 3; 2 finishes at step 3, 6 in step 4.
  auto m = by_request(all);
  EXPECT_EQ(m[5][0].due_ns, m[2][2].due_ns);
  EXPECT_EQ(m[6][0].due_ns, m[3][3].due_ns);
  for (uint64_t id = 1; id <= 6; ++id) expect_complete(all, id, id <= 4 ? id + 1 : 3);
}

// Mean time per output token after the first, over requests that all arrive at 0.
double mean_tpot_us(int concurrency) {
  EngineProfile p = test_profile();
  p.max_num_seqs = 64;
  p.max_num_batched_tokens = 4096;
  auto model = make_engine_model(p);
  for (int i = 0; i < concurrency; ++i) model->add(static_cast<uint64_t>(i), {32, 16}, 0);
  auto m = by_request(drain(*model));
  double sum = 0;
  for (auto& [id, events] : m) sum += (events.back().due_ns - events.front().due_ns) / 15.0;
  return sum / static_cast<double>(m.size()) / kUs;
}

TEST(EngineModel, MoreConcurrentRequestsMakeLongerStepsAndHigherTpot) {
  double tpot1 = mean_tpot_us(1);
  // Alone: decodes at context 33..47: 1100 + mean context 40.
  EXPECT_DOUBLE_EQ(tpot1, 1140.0);
  // Four together: 1000 + 4 * 100 + 4 * 40.
  EXPECT_DOUBLE_EQ(mean_tpot_us(4), 1560.0);
  EXPECT_GT(mean_tpot_us(16), mean_tpot_us(4));
}

TEST(EngineModel, KvExhaustionPreemptsTheLastRunningRequestWhichRecomputes) {
  EngineProfile p = test_profile();
  p.num_gpu_blocks = 10;  // 40 tokens of KV
  auto model = make_engine_model(p);
  // Each needs up to 12 + 20 - 1 = 31 tokens (8 blocks); together they cannot both finish.
  model->add(1, {12, 20}, 0);
  model->add(2, {12, 20}, 0);
  std::vector<TokenEvent> all;
  for (int s = 1; s <= 9; ++s) {
    auto e = step(*model);
    ASSERT_EQ(e.size(), 2u) << "step " << s;
    all.insert(all.end(), e.begin(), e.end());
  }
  EXPECT_EQ(model->stats().kv_cache_usage, 1.0);  // 2 x 5 blocks at 20 tokens each
  EXPECT_EQ(model->stats().preemptions, 0u);
  // Step 10: request 1 needs a 6th block; request 2 (last running) is preempted.
  auto s10 = step(*model);
  ASSERT_EQ(s10.size(), 1u);
  EXPECT_EQ(s10[0].request_id, 1u);
  ModelStats st = model->stats();
  EXPECT_EQ(st.preemptions, 1u);
  EXPECT_EQ(st.running, 1);
  EXPECT_EQ(st.waiting, 1);
  EXPECT_EQ(st.kv_cache_usage, 0.6);
  all.insert(all.end(), s10.begin(), s10.end());
  auto rest = drain(*model);
  all.insert(all.end(), rest.begin(), rest.end());
  expect_complete(all, 1, 20);
  expect_complete(all, 2, 20);
  auto m = by_request(all);
  // Request 2 had 9 tokens; it waits until request 1 is done (its 21-token recompute needs 6
  // blocks, only 4 are free), then recomputes 12 + 9 tokens in one step and goes on.
  EXPECT_GT(m[2][9].due_ns, m[1][19].due_ns);
  EXPECT_EQ(m[2][9].due_ns - m[1][19].due_ns, (1000 + 210 + 21) * kUs);
  st = model->stats();
  EXPECT_EQ(st.preemptions, 1u);
  EXPECT_EQ(st.steps, 31u);
  EXPECT_EQ(st.kv_cache_usage, 0.0);
}

TEST(EngineModel, APreemptedRequestGoesBackAheadOfTheWaitingOnes) {
  EngineProfile p = test_profile();
  p.num_gpu_blocks = 10;
  p.max_num_seqs = 2;
  auto model = make_engine_model(p);
  model->add(1, {12, 20}, 0);
  model->add(2, {12, 20}, 0);
  model->add(3, {4, 1}, 0);  // waits: max_num_seqs is 2
  auto all = drain(*model, 1000);
  EXPECT_EQ(model->stats().preemptions, 1u);
  auto m = by_request(all);
  // Request 2 (preempted at step 10) heads the queue; its 21-token recompute does not fit
  // until request 1 finishes, and request 3 stays behind it (FCFS, head of line).
  ASSERT_EQ(m[3].size(), 1u);
  EXPECT_GT(m[3][0].due_ns, m[1][19].due_ns);
  EXPECT_EQ(m[3][0].due_ns, m[2][9].due_ns);
}

TEST(EngineModel, RepeatedPreemptionStillDeliversEveryTokenOnce) {
  EngineProfile p = test_profile();
  p.num_gpu_blocks = 10;
  // 8-token steps: request 2's recompute comes back in small chunks that fit, grows, and is
  // preempted again each time request 1 needs a new block (thrashing, as on a real engine).
  p.max_num_batched_tokens = 8;
  auto model = make_engine_model(p);
  model->add(1, {12, 20}, 0);
  model->add(2, {12, 20}, 0);
  std::vector<TokenEvent> all;
  for (int s = 0; s < 100 && model->stats().preemptions == 0; ++s) {
    auto e = step(*model);
    all.insert(all.end(), e.begin(), e.end());
  }
  ModelStats st = model->stats();
  ASSERT_EQ(st.preemptions, 1u);
  EXPECT_EQ(st.running, 1);
  EXPECT_EQ(st.waiting, 1);
  auto rest = drain(*model, 1000);
  all.insert(all.end(), rest.begin(), rest.end());
  expect_complete(all, 1, 20);
  expect_complete(all, 2, 20);
  // Step 11: request 1 needs its 6th block, request 2 is preempted. Then request 2 comes back
  // 7 tokens a step, and at steps 14, 16, 18 and 20 its next chunk needs blocks that are not
  // free; being the last running request, it preempts itself. Request 1 finishes at step 21.
  EXPECT_EQ(model->stats().preemptions, 5u);
}

TEST(EngineModel, ARequestThatCanNeverFitIsRejectedAndTheBoundaryOneFinishes) {
  EngineProfile p = test_profile();
  p.num_gpu_blocks = 10;
  auto model = make_engine_model(p);
  std::string why = model->rejection_reason({30, 12});  // 41 KV tokens = 11 blocks
  EXPECT_NE(why.find("11 KV blocks"), std::string::npos) << why;
  EXPECT_NE(why.find("'test'"), std::string::npos) << why;
  EXPECT_THROW(model->add(1, {30, 12}, 0), core::Error);
  EXPECT_NE(model->rejection_reason({0, 5}), "");
  EXPECT_NE(model->rejection_reason({5, 0}), "");
  EXPECT_NE(model->rejection_reason({2'000'000'000, 2'000'000'000}), "");
  EXPECT_EQ(model->stats().waiting, 0);
  // 40 KV tokens fill the cache exactly; with a competitor it still completes.
  EXPECT_EQ(model->rejection_reason({30, 11}), "");
  model->add(2, {30, 11}, 0);
  model->add(3, {8, 30}, 0);
  auto all = drain(*model, 1000);
  expect_complete(all, 2, 11);
  expect_complete(all, 3, 30);
  EXPECT_GE(model->stats().preemptions, 1u);
}

TEST(EngineModel, CancelFreesBlocksAndReplansTheStep) {
  auto model = make_engine_model(test_profile());
  model->add(1, {20, 100}, 0);
  model->add(2, {20, 100}, 0);
  EXPECT_EQ(step(*model).size(), 2u);
  EXPECT_EQ(model->stats().kv_cache_usage, 10.0 / 1000);
  // Step 1 prefilled 2 x 20 tokens: 1000 + 400 + 40. Next: two decodes at context 21.
  EXPECT_EQ(*model->next_due_ns(), (1440 + 1000 + 200 + 42) * kUs);
  model->cancel(2);
  EXPECT_EQ(model->stats().kv_cache_usage, 5.0 / 1000);
  EXPECT_EQ(model->stats().running, 1);
  EXPECT_EQ(*model->next_due_ns(), (1440 + 1121) * kUs);
  model->cancel(1);
  EXPECT_EQ(model->stats().kv_cache_usage, 0.0);
  EXPECT_FALSE(model->next_due_ns().has_value());
  model->cancel(1);  // unknown by now: no-op
}

TEST(EngineModel, CancellingAWaitingRequestKeepsTheOthersInOrder) {
  EngineProfile p = test_profile();
  p.max_num_seqs = 1;
  auto model = make_engine_model(p);
  for (uint64_t id = 1; id <= 4; ++id) model->add(id, {4, 1}, 0);
  model->cancel(2);
  EXPECT_EQ(model->stats().waiting, 3);
  auto all = drain(*model);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].request_id, 1u);
  EXPECT_EQ(all[1].request_id, 3u);
  EXPECT_EQ(all[2].request_id, 4u);
}

TEST(EngineModel, ARequestJoinsTheFirstStepStartingAtOrAfterItsArrival) {
  auto model = make_engine_model(test_profile());
  model->add(1, {4, 2}, 0);
  EXPECT_EQ(*model->next_due_ns(), 1044 * kUs);  // planned with request 1 alone
  model->add(2, {4, 2}, 0);                      // same arrival, added after the plan
  model->add(3, {4, 2}, 1);                      // 1 ns after the step started
  auto s1 = step(*model);
  ASSERT_EQ(s1.size(), 2u);
  EXPECT_EQ(s1[0].due_ns, (1000 + 80 + 8) * kUs);
  EXPECT_EQ(s1[1].request_id, 2u);
  auto s2 = step(*model);  // 1 and 2 decode, 3 prefills
  ASSERT_EQ(s2.size(), 3u);
  EXPECT_EQ(s2[2].request_id, 3u);
  EXPECT_EQ(s2[2].token_index, 0);
}

TEST(EngineModel, ArrivalsAddedOutOfOrderAreServedByArrivalTime) {
  EngineProfile p = test_profile();
  p.max_num_seqs = 1;
  auto model = make_engine_model(p);
  model->add(1, {4, 1}, 100);
  model->add(2, {4, 1}, 50);  // an earlier arrival whose add came second
  auto all = drain(*model);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].request_id, 2u);
  EXPECT_EQ(all[0].due_ns, 50 + 1044 * kUs);
}

TEST(EngineModel, ALateCallerGetsTheSameDueTimesInOneCall) {
  auto steady = make_engine_model(test_profile());
  auto late = make_engine_model(test_profile());
  for (uint64_t id = 0; id < 6; ++id) {
    auto arrival = static_cast<int64_t>(id) * 700 * kUs;
    steady->add(id, {50, 10}, arrival);
    late->add(id, {50, 10}, arrival);
  }
  auto expected = drain(*steady);
  std::vector<TokenEvent> got;
  late->pop_due(int64_t{1} << 60, got);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].request_id, expected[i].request_id);
    EXPECT_EQ(got[i].due_ns, expected[i].due_ns);
  }
  EXPECT_EQ(late->stats().steps, steady->stats().steps);
}

TEST(EngineModel, BadProfileIsAUsageErrorNamingTheKey) {
  EngineProfile p = test_profile();
  p.block_size = 0;
  try {
    make_engine_model(p);
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("block_size"), std::string::npos);
  }
}

TEST(EngineModel, AddingAnIdTwiceIsAnError) {
  auto model = make_engine_model(test_profile());
  model->add(1, {4, 2}, 0);
  EXPECT_THROW(model->add(1, {4, 2}, 0), core::Error);
  expect_complete(drain(*model), 1, 2);
}

}  // namespace
}  // namespace servebench::sim
