#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

constexpr int64_t kMs = 1'000'000;

std::vector<TokenEvent> drain(TimingModel& model) {
  std::vector<TokenEvent> out;
  while (auto due = model.next_due_ns()) model.pop_due(*due, out);
  return out;
}

TEST(FixedModel, ExactDueTimesWithoutJitter) {
  auto model = make_fixed_model(FixedTiming{{50, 0}, {10, 0}, 7});
  model->add(1, {100, 3}, 1000);
  EXPECT_EQ(model->next_due_ns(), 1000 + 50 * kMs);

  std::vector<TokenEvent> out;
  model->pop_due(1000 + 50 * kMs - 1, out);
  EXPECT_TRUE(out.empty());

  model->pop_due(1000 + 65 * kMs, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].request_id, 1u);
  EXPECT_EQ(out[0].token_index, 0);
  EXPECT_EQ(out[0].due_ns, 1000 + 50 * kMs);
  EXPECT_FALSE(out[0].last);
  EXPECT_EQ(out[1].token_index, 1);
  EXPECT_EQ(out[1].due_ns, 1000 + 60 * kMs);
  EXPECT_EQ(model->stats().running, 1);

  out.clear();
  model->pop_due(1000 + 70 * kMs, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].token_index, 2);
  EXPECT_EQ(out[0].due_ns, 1000 + 70 * kMs);
  EXPECT_TRUE(out[0].last);
  EXPECT_FALSE(model->next_due_ns().has_value());
  EXPECT_EQ(model->stats().running, 0);
}

TEST(FixedModel, OneTokenRequestIsLastAtTtft) {
  auto model = make_fixed_model(FixedTiming{{5, 0}, {1, 0}, 0});
  model->add(9, {1, 1}, 0);
  auto out = drain(*model);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].due_ns, 5 * kMs);
  EXPECT_TRUE(out[0].last);
}

// The gaps of every request of a run, keyed by request id.
std::map<uint64_t, std::vector<int64_t>> gaps_of(uint64_t seed, int64_t arrival_step_ns) {
  auto model = make_fixed_model(FixedTiming{{50, 20}, {10, 4}, seed});
  for (uint64_t id = 0; id < 20; ++id) {
    model->add(id, {10, 30}, static_cast<int64_t>(id) * arrival_step_ns);
  }
  std::map<uint64_t, std::vector<int64_t>> gaps;
  std::map<uint64_t, int64_t> prev;
  for (const TokenEvent& e : drain(*model)) {
    int64_t base = prev.contains(e.request_id)
                       ? prev[e.request_id]
                       : static_cast<int64_t>(e.request_id) * arrival_step_ns;
    gaps[e.request_id].push_back(e.due_ns - base);
    prev[e.request_id] = e.due_ns;
  }
  return gaps;
}

TEST(FixedModel, JitterIsDeterministicPerSeedAndArrivalOrder) {
  auto a = gaps_of(42, kMs);
  auto b = gaps_of(42, kMs);
  EXPECT_EQ(a, b);
  // Same seed, same order of adds, different arrival times: the same draws.
  EXPECT_EQ(a, gaps_of(42, 3 * kMs));
  EXPECT_NE(a, gaps_of(43, kMs));
  // Draws vary within a request and between requests.
  ASSERT_EQ(a[0].size(), 30u);
  EXPECT_NE(a[0][1], a[0][2]);
  EXPECT_NE(a[0][0], a[1][0]);
}

TEST(FixedModel, JitterDrawsAreNormalAroundTheMeanAndClampedAtZero) {
  // Mean 10 ms, sd 2 ms: 5000 draws average within 0.2 ms of 10 (about 7 standard errors).
  auto model = make_fixed_model(FixedTiming{{0, 0}, {10, 2}, 1});
  model->add(1, {1, 5001}, 0);
  auto out = drain(*model);
  ASSERT_EQ(out.size(), 5001u);
  double mean_ms = static_cast<double>(out.back().due_ns - out.front().due_ns) / 5000 / kMs;
  EXPECT_NEAR(mean_ms, 10.0, 0.2);

  // Mean 1 ms, sd 10 ms: about half the draws are negative and clamp to 0.
  auto clamped = make_fixed_model(FixedTiming{{1, 10}, {1, 10}, 1});
  clamped->add(1, {1, 1000}, 0);
  auto events = drain(*clamped);
  ASSERT_EQ(events.size(), 1000u);
  EXPECT_GE(events[0].due_ns, 0);
  int zero_gaps = 0;
  for (size_t i = 1; i < events.size(); ++i) {
    ASSERT_GE(events[i].due_ns, events[i - 1].due_ns);
    zero_gaps += events[i].due_ns == events[i - 1].due_ns;
  }
  EXPECT_GT(zero_gaps, 300);
  EXPECT_LT(zero_gaps, 700);
}

TEST(FixedModel, CancelRemovesTheRequestsTokens) {
  auto model = make_fixed_model(FixedTiming{{10, 0}, {10, 0}, 0});
  model->add(1, {1, 5}, 0);
  model->add(2, {1, 5}, 1);
  model->add(3, {1, 5}, 2);
  std::vector<TokenEvent> out;
  model->pop_due(10 * kMs + 2, out);
  ASSERT_EQ(out.size(), 3u);
  model->cancel(2);
  model->cancel(2);   // twice: no-op
  model->cancel(77);  // unknown: no-op
  EXPECT_EQ(model->stats().running, 2);
  auto rest = drain(*model);
  ASSERT_EQ(rest.size(), 8u);
  for (const TokenEvent& e : rest) EXPECT_NE(e.request_id, 2u);
  // The id can be used again after a cancel.
  model->add(2, {1, 1}, 0);
  EXPECT_EQ(drain(*model).size(), 1u);
}

TEST(FixedModel, ManyRequestsInterleaveInDueOrder) {
  constexpr int kRequests = 10000;
  auto model = make_fixed_model(FixedTiming{{20, 0}, {3, 0}, 0});
  int64_t total = 0;
  for (int i = 0; i < kRequests; ++i) {
    int32_t n = 1 + i % 17;
    total += n;
    model->add(static_cast<uint64_t>(i), {8, n}, static_cast<int64_t>(i) * 7'000);
  }
  EXPECT_EQ(model->stats().running, kRequests);
  std::vector<TokenEvent> out;
  for (int64_t now = 0; model->next_due_ns(); now += 1'300'000) model->pop_due(now, out);
  ASSERT_EQ(static_cast<int64_t>(out.size()), total);
  std::vector<int32_t> next(kRequests, 0);
  for (size_t k = 0; k < out.size(); ++k) {
    const TokenEvent& e = out[k];
    if (k > 0) {
      ASSERT_LE(out[k - 1].due_ns, e.due_ns);
    }
    auto id = static_cast<int>(e.request_id);
    ASSERT_EQ(e.token_index, next[id]);
    ASSERT_EQ(e.due_ns, int64_t{id} * 7'000 + 20 * kMs + int64_t{e.token_index} * 3 * kMs);
    ASSERT_EQ(e.last, e.token_index == id % 17);
    ++next[id];
  }
}

TEST(FixedModel, RejectsZeroOutputAndDuplicateIds) {
  auto model = make_fixed_model(FixedTiming{});
  EXPECT_NE(model->rejection_reason({5, 0}), "");
  EXPECT_EQ(model->rejection_reason({0, 1}), "");
  EXPECT_THROW(model->add(1, {5, 0}, 0), core::Error);
  model->add(1, {5, 2}, 0);
  EXPECT_THROW(model->add(1, {5, 2}, 0), core::Error);
  EXPECT_EQ(drain(*model).size(), 2u);
}

TEST(FixedModel, BadTimingIsAUsageError) {
  try {
    make_fixed_model(FixedTiming{{-1, 0}, {10, 0}, 0});
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("ttft"), std::string::npos);
  }
}

}  // namespace
}  // namespace servebench::sim
