// Two servers on one GPU (seed 001): MPS, fixed SM partitions.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "sim/deploy/deploy.h"
#include "sim/deploy/load_driver.h"

namespace servebench::sim::deploy {
namespace {

const std::filesystem::path kExamples =
    std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "profiles" / "deployments";

// Mean TPOT of each frontend with `clients[i]` clients on frontend i (1000 in, 100 out).
std::vector<double> tpot(const char* file, std::vector<int> clients) {
  auto d = make_deployment_model(load_deployment((kExamples / file).string()));
  std::vector<TimingModel*> targets;
  for (size_t i = 0; i < d->frontend_count(); ++i) targets.push_back(&d->frontend(i));
  LoadDriver driver(targets);
  auto done = driver.closed_loop(clients, 6, [](size_t t, int) {
    return Job{t, {1000, 100}, 0, 0, 0};
  });
  std::vector<double> out;
  for (size_t i = 0; i < clients.size(); ++i) out.push_back(summarize(done, i).mean_tpot_ms);
  return out;
}

TEST(SharedGpu, TwoServersUnderMpsEachDecodeAbout2To2Point5TimesSlower) {
  const double alone = tpot("seed001-llama-8b-h100-mps.yaml", {4, 0})[0];
  const std::vector<double> both = tpot("seed001-llama-8b-h100-mps.yaml", {4, 4});
  std::printf("MPS TPOT: alone %.2f ms, together %.2f / %.2f ms\n", alone, both[0], both[1]);
  for (double t : both) {
    EXPECT_GT(t / alone, 2.0);  // seed 001: 8.95 → 21.0 ms
    EXPECT_LT(t / alone, 2.5);
  }
}

TEST(SharedGpu, AnSmPartitionSlowsComputeAloneAndBandwidthWhenShared) {
  const double full = tpot("seed001-llama-8b-h100-mps.yaml", {4, 0})[0];
  const double half_alone = tpot("seed001-llama-8b-h100-sm-partition.yaml", {4, 0})[0];
  const std::vector<double> half_both = tpot("seed001-llama-8b-h100-sm-partition.yaml", {4, 4});
  std::printf("SM partition TPOT: full GPU %.2f, 64 SMs alone %.2f, both %.2f ms\n", full,
              half_alone, half_both[0]);
  // Decode is memory-bound: half the SMs cost nothing alone, the shared bandwidth halves it.
  EXPECT_NEAR(half_alone / full, 1.0, 0.05);
  EXPECT_NEAR(half_both[0] / full, 2.0, 0.2);
  // A compute-bound prefill alone takes about 132/64 as long on 64 SMs.
  auto ttft = [](const char* file) {
    auto d = make_deployment_model(load_deployment((kExamples / file).string()));
    LoadDriver driver({&d->frontend(0)});
    return summarize(driver.closed_loop({1}, 1,
                                        [](size_t, int) {
                                          return Job{0, {8000, 2}, 0, 0, 0};
                                        }))
        .mean_ttft_ms;
  };
  const double ratio =
      ttft("seed001-llama-8b-h100-sm-partition.yaml") / ttft("seed001-llama-8b-h100-mps.yaml");
  EXPECT_GT(ratio, 1.5);
  EXPECT_LT(ratio, 132.0 / 64);
}

}  // namespace
}  // namespace servebench::sim::deploy
