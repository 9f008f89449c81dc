// `servebench sim --deployment`: every frontend served at its own port, driven by `run` with a
// --base-url list, the simulated DCGM exporter scraped beside the frontends' /metrics, and a
// deployment that cannot run refused in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

const std::string kMps =
    std::string(SERVEBENCH_SOURCE_DIR) + "/profiles/deployments/seed001-llama-8b-h100-mps.yaml";

TEST(SimDeployment, EveryFrontendIsServedAndRunDrivesThemWithDcgmScrapedBeside) {
  const int port = free_ports(2);
  const std::string a = "http://127.0.0.1:" + std::to_string(port);
  const std::string b = "http://127.0.0.1:" + std::to_string(port + 1);
  Background sim({"sim", "--deployment", kMps, "--port", std::to_string(port)});
  ASSERT_TRUE(sim.wait_for_port(port, 20)) << sim.log();
  ASSERT_TRUE(sim.wait_for_port(port + 1, 20)) << sim.log();

  TempDir dir;
  Outcome o =
      run({"run", "--base-url", a + "," + b, "--model", "servebench-sim", "--tokenizer", "builtin",
           "--num-prompts", "6", "--random-input-len", "16", "--random-output-len", "8",
           "--server-metrics", a + "/metrics," + a + "/dcgm/metrics", "--disable-tqdm",
           "--save-result", "--result-dir", dir.path()},
          60);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  size_t results = 0;
  bool dcgm_seen = false, worker_seen = false;
  for (const std::string& name : dir.files()) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    if (name.find(".combined.") != std::string::npos) continue;  // both targets together
    ++results;
    const json r = json::parse(read_file(dir.path() + "/" + name));
    EXPECT_EQ(r["completed"], 6) << name;
    const std::string text = r.dump();
    dcgm_seen = dcgm_seen || text.find("DCGM_FI_DEV_GPU_UTIL") != std::string::npos;
    worker_seen = worker_seen || text.find("vllm:generation_tokens") != std::string::npos;
  }
  EXPECT_EQ(results, 2u);  // one per frontend
  EXPECT_TRUE(dcgm_seen) << o.err;
  EXPECT_TRUE(worker_seen) << o.err;
}

TEST(SimDeployment, TheCommandPrintsEachFrontendsUrl) {
  const int port = free_ports(2);
  RunSpec spec;
  spec.args = {"sim", "--deployment", kMps, "--port", std::to_string(port)};
  spec.timeout_s = 20;
  spec.sigint_after = "frontend server-b";
  spec.sigint_delay_s = 1.0;  // well after the frontends serve
  Outcome o = run(spec);
  EXPECT_EQ(o.exit_code, 130) << o.out << o.err;  // stopped by SIGINT (docs/reliability.md)
  EXPECT_NE(o.out.find("frontend server-a: serving servebench-sim on http://127.0.0.1:" +
                       std::to_string(port)),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("frontend server-b: serving servebench-sim on http://127.0.0.1:" +
                       std::to_string(port + 1)),
            std::string::npos)
      << o.out;
}

TEST(SimDeployment, ADeploymentThatCannotRunIsOneLineNamingFileAndKey) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.yaml";
  std::ofstream(path) << "name: bad\nmodel: Llama-3.1-8B\ngpu: H100\nworkers:\n"
                         "  - {name: a, tp: 3}\n";
  Outcome o = run({"sim", "--deployment", path}, 20);
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_EQ(o.err, "servebench: " + path +
                       ":5: key 'workers[0].tp': tp 3 does not divide the model's 32 attention "
                       "heads\n");
}

}  // namespace
}  // namespace servebench::itest
