// Step-time noise and initial phases (docs/deployments.md, "Noise"): replicas with equal step
// costs drift apart as real ones do, repeatably, on made-up clocks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/deploy/deploy.h"

namespace servebench::sim::deploy {
namespace {

// Two replicas of bench/deployments/step-80ms.yaml (a lone decode step: 70,078 µs) behind a
// round-robin router; `extra` adds keys to the worker.
std::unique_ptr<DeploymentModel> two_replicas(const std::string& extra) {
  const std::string profile =
      (std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "bench" / "deployments" / "step-80ms.yaml")
          .string();
  const std::string text =
      "gpu: H100\ngpus_per_node: 16\nworkers:\n  - {name: engine, replicas: 2, "
      "profile: " +
      profile + extra + "}\nrouters:\n  - {name: rr, policy: round_robin, workers: [engine]}\n";
  return make_deployment_model(parse_deployment(text, "noise.yaml"));
}

// Requests 1 and 2 (one per replica) arrive at 0 with `tokens` tokens each; their due times.
std::map<uint64_t, std::vector<int64_t>> run_two(DeploymentModel& d, int tokens) {
  FrontendModel& fe = d.frontend(0);
  fe.add(1, {10, tokens}, 0);
  fe.add(2, {10, tokens}, 0);
  std::vector<TokenEvent> out;
  while (auto due = fe.next_due_ns()) fe.pop_due(*due, out);
  std::map<uint64_t, std::vector<int64_t>> due;
  for (const TokenEvent& e : out) due[e.request_id].push_back(e.due_ns);
  return due;
}

struct Spread {
  double mean_ms = 0;
  double cv = 0;
};
Spread itl_spread(const std::vector<int64_t>& due) {
  std::vector<double> itl;
  for (size_t i = 1; i < due.size(); ++i) itl.push_back(static_cast<double>(due[i] - due[i - 1]));
  double mean = 0, var = 0;
  for (double x : itl) mean += x;
  mean /= static_cast<double>(itl.size());
  for (double x : itl) var += (x - mean) * (x - mean);
  var /= static_cast<double>(itl.size() - 1);
  return {mean / 1e6, std::sqrt(var) / mean};
}

TEST(StepTimeNoise, StepsHaveTheConfiguredCoefficientOfVariation) {
  for (double cv : {0.04, 0.1, 0.3}) {
    auto d = two_replicas(", step_time_cv: " + std::to_string(cv));
    for (const auto& [id, due] : run_two(*d, 3001)) {
      ASSERT_EQ(due.size(), 3001u);
      const Spread s = itl_spread(due);
      // 3,000 steps: the sample CV is within ~2 % of the true one, the mean within 0.5 %.
      EXPECT_NEAR(s.cv, cv, 0.1 * cv) << "request " << id;
      EXPECT_NEAR(s.mean_ms, 70.078, 0.01 * 70.078) << "request " << id;
    }
  }
}

TEST(StepTimeNoise, TheDefaultIsSeedZeroZeroZerosSpread) {
  auto d = two_replicas("");
  const Spread s = itl_spread(run_two(*d, 2001).at(1));
  EXPECT_NEAR(s.cv, kDefaultStepTimeCv, 0.1 * kDefaultStepTimeCv);
}

TEST(StepTimeNoise, TwoReplicasStepsDoNotCoincide) {
  auto d = two_replicas("");
  auto due = run_two(*d, 200);
  const std::set<int64_t> first(due[1].begin(), due[1].end());
  for (int64_t t : due[2]) EXPECT_FALSE(first.contains(t)) << t;
  // They drift apart like a random walk: after 200 steps of σ ≈ 2.8 ms, by well over a step's
  // 1 ms-scale burst.
  EXPECT_GT(std::llabs(due[1].back() - due[2].back()), 1'000'000);
}

TEST(StepTimeNoise, WithoutNoiseEqualReplicasStayInStep) {
  auto d = two_replicas(", step_time_cv: 0");
  auto due = run_two(*d, 50);
  // Every step of both ends together; the frontend writes request 2's chunk one chunk after
  // request 1's (docs/deployments.md, "Frontend output").
  ASSERT_EQ(due[1].size(), due[2].size());
  for (size_t i = 0; i < due[1].size(); ++i) {
    EXPECT_EQ(due[2][i] - due[1][i], kDefaultOutputNsPerChunk) << i;
  }
  EXPECT_EQ(due[1][1] - due[1][0], 70'078'000);
}

TEST(StepTimeNoise, ASeedRepeatsARunAndAnotherSeedChangesIt) {
  auto a = run_two(*two_replicas(", noise_seed: 7"), 100);
  auto b = run_two(*two_replicas(", noise_seed: 7"), 100);
  auto c = run_two(*two_replicas(", noise_seed: 8"), 100);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(StepTimeNoise, InitialPhasesSpreadTheFirstStepsWithinTheGivenWindow) {
  auto d = two_replicas(", step_time_cv: 0, start_phase_ms: 80");
  auto due = run_two(*d, 3);
  // A first step is the prefill of 10 tokens: 70,000 + 50 µs, after a phase in [0, 80 ms).
  for (uint64_t id : {1, 2}) {
    EXPECT_GE(due[id][0], 70'050'000);
    EXPECT_LT(due[id][0], 150'050'000);
    EXPECT_EQ(due[id][1] - due[id][0], 70'078'000);  // later steps are not delayed
  }
  EXPECT_NE(due[1][0], due[2][0]);
}

}  // namespace
}  // namespace servebench::sim::deploy
