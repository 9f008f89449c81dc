// `servebench run --sim-deployment FILE`: the deployment started embedded, one target per
// frontend, its file recorded in each result, every frontend's /metrics and the DCGM exporter
// scraped by --server-metrics auto; the flags it cannot go with refused in one line.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

const std::string kMps =
    std::string(SERVEBENCH_SOURCE_DIR) + "/profiles/deployments/seed001-llama-8b-h100-mps.yaml";

TEST(RunSimDeployment, EachFrontendIsATargetAndTheResultNamesTheDeployment) {
  TempDir dir;
  Outcome o = run({"run", "--sim-deployment", kMps, "--tokenizer", "builtin", "--num-prompts", "6",
                   "--random-input-len", "16", "--random-output-len", "8", "--disable-tqdm",
                   "--save-result", "--result-dir", dir.path()},
                  90);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Combined Result (2 targets"), std::string::npos) << o.out;
  const std::string content = read_file(kMps);
  size_t results = 0;
  for (const std::string& name : dir.files()) {
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    if (name.find(".combined.") != std::string::npos) continue;
    ++results;
    const json r = json::parse(read_file(dir.path() + "/" + name));
    EXPECT_EQ(r["completed"], 6) << name;
    const json& d = r["servebench"]["deployment"];
    EXPECT_EQ(d["file"], kMps) << name;
    EXPECT_EQ(d["content"], content) << name;
    EXPECT_FALSE(d["name"].get<std::string>().empty()) << name;
    // Both frontends' /metrics and one /dcgm/metrics.
    const json& endpoints = r["servebench"]["server_metrics"]["endpoints"];
    ASSERT_EQ(endpoints.size(), 3u) << endpoints.dump();
    EXPECT_NE(endpoints.dump().find("/dcgm/metrics"), std::string::npos);
    EXPECT_NE(r.dump().find("DCGM_FI_DEV_GPU_UTIL"), std::string::npos) << name;
  }
  EXPECT_EQ(results, 2u);  // one per frontend
}

TEST(RunSimDeployment, RefusesTheFlagsItCannotGoWith) {
  const std::vector<std::vector<std::string>> cases = {
      {"--base-url", "http://127.0.0.1:1"},
      {"--port", "8000"},
      {"--sim-instances", "2"},
      {"--sim-mode", "engine", "--sim-engine-profile", "x.yaml"}};
  for (const auto& extra : cases) {
    std::vector<std::string> args = {"run", "--sim-deployment", kMps};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args, 20);
    EXPECT_EQ(o.exit_code, 2) << extra[0] << ": " << o.err;
    EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
    EXPECT_NE(o.err.find("--sim-deployment"), std::string::npos) << o.err;
  }
}

TEST(RunSimDeployment, AFileThatCannotRunIsOneLine) {
  TempDir dir;
  const std::string path = dir.path() + "/bad.yaml";
  {
    std::ofstream(path) << "name: bad\nmodel: Llama-3.1-8B\ngpu: H100\nworkers:\n"
                           "  - {name: a, tp: 3}\n";
  }
  Outcome o = run({"run", "--sim-deployment", path, "--num-prompts", "2"}, 20);
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.err.find(path + ":5: key 'workers[0].tp'"), std::string::npos) << o.err;
  EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
}

}  // namespace
}  // namespace servebench::itest
