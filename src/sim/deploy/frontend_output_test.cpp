// The frontend's output stage (docs/deployments.md, "Frontend output"): a step's tokens leave
// one chunk after another, on each API-server loop, and a loop handed more than it can write
// falls behind; on made-up clocks.
#include "sim/deploy/frontend_output.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "sim/deploy/deploy.h"

namespace servebench::sim::deploy {
namespace {

constexpr int64_t kUs = 1000;

// Pushes one token per request 1..n, all produced at `at_ns`, each on its assigned lane.
void one_step(FrontendOutput& output, std::map<uint64_t, int32_t>& lanes, int n, int64_t at_ns,
              int32_t token_index) {
  for (int r = 1; r <= n; ++r) {
    const auto id = static_cast<uint64_t>(r);
    if (!lanes.contains(id)) lanes[id] = output.assign_lane();
    output.push(lanes[id], TokenEvent{id, token_index, at_ns, false});
  }
}

std::vector<TokenEvent> drain(FrontendOutput& output) {
  std::vector<TokenEvent> out;
  while (auto due = output.next_due_ns()) output.pop_due(*due, out);
  return out;
}

TEST(FrontendOutput, AStepsChunksLeaveOneAfterAnotherOnOneLoop) {
  FrontendOutput output(46 * kUs, 1);
  std::map<uint64_t, int32_t> lanes;
  one_step(output, lanes, 128, 1'000'000, 0);
  const std::vector<TokenEvent> out = drain(output);
  ASSERT_EQ(out.size(), 128u);
  for (size_t k = 0; k < out.size(); ++k) {
    EXPECT_EQ(out[k].request_id, k + 1);
    EXPECT_EQ(out[k].due_ns, 1'000'000 + static_cast<int64_t>(k + 1) * 46 * kUs);
  }
}

TEST(FrontendOutput, SeveralLoopsWriteInParallel) {
  FrontendOutput output(40 * kUs, 4);
  std::map<uint64_t, int32_t> lanes;
  one_step(output, lanes, 128, 0, 0);
  const std::vector<TokenEvent> out = drain(output);
  ASSERT_EQ(out.size(), 128u);
  // 32 chunks per loop: the last leaves after 32 × 40 µs, not 128 × 40 µs.
  EXPECT_EQ(out.back().due_ns, 32 * 40 * kUs);
  std::map<int64_t, int> per_instant;
  for (size_t k = 0; k < out.size(); ++k) {
    if (k > 0) {
      EXPECT_LE(out[k - 1].due_ns, out[k].due_ns);  // due order across loops
    }
    ++per_instant[out[k].due_ns];
  }
  EXPECT_EQ(per_instant.size(), 32u);
  for (const auto& [at, n] : per_instant) EXPECT_EQ(n, 4) << at;
}

TEST(FrontendOutput, NoCostLeavesTheWorkersTimes) {
  FrontendOutput output(0, 1);
  std::map<uint64_t, int32_t> lanes;
  one_step(output, lanes, 64, 5'000, 0);
  for (const TokenEvent& e : drain(output)) EXPECT_EQ(e.due_ns, 5'000);
}

TEST(FrontendOutput, ASpeculativeStepsTokensOfOneRequestAreOneChunk) {
  FrontendOutput output(10 * kUs, 1);
  const int32_t lane = output.assign_lane();
  output.push(lane, TokenEvent{7, 0, 0, false});
  output.push(lane, TokenEvent{7, 1, 0, false});
  output.push(lane, TokenEvent{7, 2, 0, false});
  output.push(lane, TokenEvent{8, 0, 0, false});
  const std::vector<TokenEvent> out = drain(output);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].due_ns, 10 * kUs);
  EXPECT_EQ(out[1].due_ns, 10 * kUs);
  EXPECT_EQ(out[2].due_ns, 10 * kUs);
  EXPECT_EQ(out[3].due_ns, 20 * kUs);  // one chunk's cost for request 7's three tokens
}

TEST(FrontendOutput, ALoopHandedMoreThanItCanWriteFallsFurtherBehindEachStep) {
  // 100 chunks every 1 ms at 20 µs each: 2 ms of writing per 1 ms step.
  FrontendOutput output(20 * kUs, 1);
  std::map<uint64_t, int32_t> lanes;
  for (int step = 0; step < 5; ++step) one_step(output, lanes, 100, step * 1000 * kUs, step);
  const std::vector<TokenEvent> out = drain(output);
  ASSERT_EQ(out.size(), 500u);
  for (int step = 0; step < 5; ++step) {
    const TokenEvent& last = out[static_cast<size_t>(step * 100 + 99)];
    const int64_t delay = last.due_ns - step * 1000 * kUs;
    EXPECT_EQ(delay, (step + 1) * 2000 * kUs - step * 1000 * kUs) << step;  // +1 ms a step
  }
}

TEST(FrontendOutput, ACancelledRequestsChunksAreNotWritten) {
  FrontendOutput output(10 * kUs, 2);
  std::map<uint64_t, int32_t> lanes;
  one_step(output, lanes, 6, 0, 0);
  output.cancel(3);
  const std::vector<TokenEvent> out = drain(output);
  EXPECT_EQ(out.size(), 5u);
  for (const TokenEvent& e : out) EXPECT_NE(e.request_id, 3u);
}

// Through a deployment: bench/deployments/step-80ms.yaml, 16 requests in one step.
std::unique_ptr<DeploymentModel> one_engine(const std::string& frontend) {
  const std::string profile =
      (std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "bench" / "deployments" / "step-80ms.yaml")
          .string();
  const std::string text =
      "gpu: H100\nworkers:\n"
      "  - {name: engine, step_time_cv: 0, profile: " +
      profile +
      "}\n"
      "routers:\n  - {name: r, workers: [engine]}\n"
      "frontends:\n  - {router: r" +
      frontend + "}\n";
  return make_deployment_model(parse_deployment(text, "out.yaml"));
}

std::map<uint64_t, std::vector<int64_t>> sixteen_requests(DeploymentModel& d) {
  FrontendModel& fe = d.frontend(0);
  for (uint64_t id = 1; id <= 16; ++id) fe.add(id, {10, 4}, 0);
  std::vector<TokenEvent> out;
  while (auto due = fe.next_due_ns()) fe.pop_due(*due, out);
  std::map<uint64_t, std::vector<int64_t>> due;
  for (const TokenEvent& e : out) due[e.request_id].push_back(e.due_ns);
  return due;
}

TEST(FrontendOutputInADeployment, DefaultCostSpreadsAStepsTokensAndKeepsTheInterTokenGap) {
  auto none = sixteen_requests(*one_engine(", output_us_per_chunk: 0"));
  auto deflt = sixteen_requests(*one_engine(""));
  ASSERT_EQ(none.size(), 16u);
  ASSERT_EQ(deflt.size(), 16u);
  for (uint64_t id = 1; id <= 16; ++id) {
    ASSERT_EQ(deflt[id].size(), 4u);
    // Every request's tokens of one step are due together without the output stage; with it,
    // the k-th chunk of a step leaves k × 46 µs after the step.
    EXPECT_EQ(none[id][0], none[1][0]);
    EXPECT_EQ(deflt[id][0] - none[id][0], static_cast<int64_t>(id) * kDefaultOutputNsPerChunk);
    for (size_t t = 1; t < 4; ++t) {
      EXPECT_EQ(deflt[id][t] - deflt[id][t - 1], none[id][t] - none[id][t - 1]) << id;
    }
  }
}

TEST(FrontendOutputInADeployment, KeysAreReadAndCheckedNamingTheKey) {
  auto spread = sixteen_requests(*one_engine(", output_us_per_chunk: 100, api_servers: 2"));
  auto none = sixteen_requests(*one_engine(", output_us_per_chunk: 0"));
  // Two loops: requests 1, 3, 5, … on one and 2, 4, 6, … on the other, 100 µs apart on each.
  EXPECT_EQ(spread[1][0] - none[1][0], 100 * kUs);
  EXPECT_EQ(spread[2][0] - none[2][0], 100 * kUs);
  EXPECT_EQ(spread[16][0] - none[16][0], 8 * 100 * kUs);
  try {
    one_engine(", api_servers: 0");
    FAIL() << "api_servers 0 accepted";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("frontends[0].api_servers"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(one_engine(", output_us_per_chunk: -1"), core::Error);
}

}  // namespace
}  // namespace servebench::sim::deploy
