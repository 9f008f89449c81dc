// vLLM's ramp-up during a point (ramp_up.cpp): the console lines, and rps_change_events and the
// "ramp_up" section built from a plan.
#include "run/ramp_up.h"

#include <gtest/gtest.h>

#include <utility>

#include "core/clock.h"
#include "run/result_json.h"

namespace servebench::run {
namespace {

TEST(RampUpConsole, VllmsTwoLines) {
  EXPECT_EQ(ramp_up_traffic_lines({schedule::RampUpStrategy::kLinear, 1, 20}),
            "Traffic ramp-up strategy: linear.\n"
            "Will increase RPS from 1 to 20 RPS over the duration of the benchmark.\n");
  EXPECT_EQ(ramp_up_traffic_lines({schedule::RampUpStrategy::kExponential, 2, 64}),
            "Traffic ramp-up strategy: exponential.\n"
            "Will increase RPS from 2 to 64 RPS over the duration of the benchmark.\n");
}

constexpr int64_t kWallT0 = 1'700'000'000LL * 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

// Single requests due every 100 ms, each sent 1 ms late.
std::vector<client::PlannedRequest> plan_of(size_t n) {
  std::vector<client::PlannedRequest> plan(n);
  for (size_t i = 0; i < n; ++i) {
    plan[i].index = i;
    plan[i].intended_ns = static_cast<int64_t>(i + 1) * 100 * kMs;
  }
  return plan;
}

std::string at(int64_t ns_after_t0) {
  return core::local_iso_timestamp(kWallT0 + ns_after_t0);
}

using Events = std::vector<std::pair<int64_t, std::string>>;
Events pairs(const std::vector<report::RpsChangeEvent>& events) {
  Events out;
  for (const auto& e : events) out.emplace_back(e.rps, e.timestamp);
  return out;
}

TEST(RpsChangeEvents, OneEventPerIntegerRateWhenTheRequestThatReachedItWasDue) {
  // Linear 1 → 10 over 4 requests: rates 1, 4, 7, 10.
  const auto plan = plan_of(4);
  const schedule::RampUp linear{schedule::RampUpStrategy::kLinear, 1, 10};
  EXPECT_EQ(pairs(rps_change_events(linear, plan, kWallT0)), (Events{{1, at(0)},
                                                                     {2, at(200 * kMs)},
                                                                     {3, at(200 * kMs)},
                                                                     {4, at(200 * kMs)},
                                                                     {5, at(300 * kMs)},
                                                                     {6, at(300 * kMs)},
                                                                     {7, at(300 * kMs)},
                                                                     {8, at(400 * kMs)},
                                                                     {9, at(400 * kMs)},
                                                                     {10, at(400 * kMs)}}));
}

TEST(RpsChangeEvents, RatesAreTruncatedAsPythonsInt) {
  // Linear 1 → 2 over 3 requests: rates 1, 1.5, 2; 1.5 is still 1.
  auto plan = plan_of(3);
  const schedule::RampUp slow{schedule::RampUpStrategy::kLinear, 1, 2};
  EXPECT_EQ(pairs(rps_change_events(slow, plan, kWallT0)),
            (Events{{1, at(0)}, {2, at(300 * kMs)}}));
  // Exponential 3 → 10: the last rate is 3 * (10/3) = 10.000000000000002, int 10.
  plan = plan_of(2);
  const schedule::RampUp exponential{schedule::RampUpStrategy::kExponential, 3, 10};
  const auto events = rps_change_events(exponential, plan, kWallT0);
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events.back().rps, 10);
}

TEST(RpsChangeEvents, MultiTurnRampsOverFirstTurnsOnly) {
  // Two conversations of two turns: the ramp's two requests are plan entries 0 and 2.
  auto plan = plan_of(4);
  for (size_t i = 0; i < 4; ++i) {
    plan[i].conversation = static_cast<int64_t>(i / 2);
    plan[i].turn = static_cast<int32_t>(i % 2);
  }
  const schedule::RampUp linear{schedule::RampUpStrategy::kLinear, 1, 3};
  EXPECT_EQ(pairs(rps_change_events(linear, plan, kWallT0)),
            (Events{{1, at(0)}, {2, at(300 * kMs)}, {3, at(300 * kMs)}}));
  const nlohmann::json j = ramp_up_json(linear, plan);
  EXPECT_EQ(j["requests"], 2);
  EXPECT_DOUBLE_EQ(j["last_due_s"].get<double>(), 0.3);
  EXPECT_EQ(j["strategy"], "linear");
  EXPECT_EQ(j["start_rps"], 1);
  EXPECT_EQ(j["end_rps"], 3);
}

}  // namespace
}  // namespace servebench::run
