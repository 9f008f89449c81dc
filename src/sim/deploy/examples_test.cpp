// Every shipped deployment file (examples/seeds/*/*.yaml but the suites,
// profiles/deployments/*.yaml) loads, and each of its frontends serves a few requests through the
// model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/deploy/deploy.h"
#include "sim/deploy/load_driver.h"

namespace servebench::sim::deploy {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> shipped_deployments() {
  const fs::path root(SERVEBENCH_SOURCE_DIR);
  std::vector<fs::path> files;
  for (const fs::path& dir : {root / "examples" / "seeds", root / "profiles" / "deployments"}) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      // A seed's suite files (suite.yaml, suite-quick.yaml) sit beside its deployments.
      if (entry.is_regular_file() && entry.path().extension() == ".yaml" &&
          !entry.path().filename().string().starts_with("suite")) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ShippedDeployments, TheSeedExamplesAreAllThere) {
  const fs::path seeds = fs::path(SERVEBENCH_SOURCE_DIR) / "examples" / "seeds";
  for (const char* file :
       {"000/tp8_pp1.yaml", "000/tp4_pp2_IB.yaml", "000/tp4_pp2_no_IB.yaml", "001/one-server.yaml",
        "001/two-servers-mps.yaml", "001/sm-64-64.yaml", "001/sm-96-4.yaml",
        "002/tp4_pp2_IB_specdecode.yaml", "003/deepseek-v2.5-ib.yaml",
        "003/deepseek-v2.5-no-ib.yaml", "004/dynamo-3p1d.yaml", "004/dynamo-6p1d.yaml",
        "004/dynamo-12p1d.yaml", "004/vllm-v0-4xtp4.yaml", "004/vllm-v1-4xtp4.yaml"}) {
    EXPECT_TRUE(fs::exists(seeds / file)) << file;
  }
}

TEST(ShippedDeployments, EachLoadsAndServesAFewRequestsOnEveryFrontend) {
  const auto files = shipped_deployments();
  ASSERT_GE(files.size(), 15u);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::unique_ptr<DeploymentModel> model;
    ASSERT_NO_THROW(model = make_deployment_model(load_deployment(file.string())));
    ASSERT_GE(model->frontend_count(), 1u);
    std::vector<TimingModel*> targets;
    for (size_t f = 0; f < model->frontend_count(); ++f) targets.push_back(&model->frontend(f));
    LoadDriver driver(targets);
    const std::vector<int> clients(targets.size(), 2);
    const auto done = driver.closed_loop(clients, 2, [](size_t target, int) {
      return Job{target, RequestShape{128, 8}, 0, 0, 0};
    });
    ASSERT_EQ(done.size(), 4 * targets.size());
    for (const Finished& f : done) {
      EXPECT_EQ(f.tokens, 8);
      EXPECT_GT(f.ttft_ms(), 0);
      EXPECT_GT(f.tpot_ms(), 0);
    }
  }
}

}  // namespace
}  // namespace servebench::sim::deploy
