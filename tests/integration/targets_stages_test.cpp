// Several targets in one run (a --base-url list, --sim-instances) and inference-perf's load
// stages (--stages), the real binary end to end with small counts.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; at += what.size()) ++n;
  return n;
}

// The value after `label` in the text following `from` (a console line of a block).
std::optional<double> value_after(const std::string& out, const std::string& from,
                                  const std::string& label) {
  const size_t at = out.find(from);
  if (at == std::string::npos) return std::nullopt;
  return console_value(out.substr(at), label);
}

std::vector<json> results_in(const TempDir& dir) {
  std::vector<json> results;
  for (const std::string& name : dir.files())
    if (name.ends_with(".json") && !name.ends_with(".combined.json"))
      results.push_back(json::parse(read_file(dir.path() + "/" + name)));
  return results;
}

TEST(RunTargets, TwoEmbeddedSimulatorsEachWithItsBlockResultAndTheCombinedFigures) {
  TempDir dir;
  Outcome o = run({"run",
                   "--sim-instances",
                   "2",
                   "--num-prompts",
                   "24",
                   "--random-input-len",
                   "16",
                   "--random-output-len",
                   "8",
                   "--sim-ttft-ms",
                   "5",
                   "--sim-itl-ms",
                   "1",
                   "--request-rate",
                   "60",
                   "--num-warmups",
                   "2",
                   "--save-result",
                   "--result-dir",
                   dir.path()},
                  30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // One vLLM block per target, each after its heading, then the combined block.
  EXPECT_EQ(count_of(o.out, "============ Serving Benchmark Result ============\n"), 2u);
  // No --temperature: said once for the run, not once per target.
  EXPECT_EQ(count_of(o.out, "WARNING: no --temperature given"), 1u) << o.out;
  const size_t first = o.out.find("\nTarget 1 of 2: http://127.0.0.1:");
  const size_t second = o.out.find("\nTarget 2 of 2: http://127.0.0.1:");
  const size_t combined = o.out.find("Combined Result (2 targets, one t0)");
  ASSERT_NE(first, std::string::npos) << o.out;
  ASSERT_NE(second, std::string::npos) << o.out;
  ASSERT_NE(combined, std::string::npos) << o.out;
  EXPECT_LT(first, second);
  EXPECT_LT(second, combined);
  const auto done1 = value_after(o.out, "Target 1 of 2", "Successful requests:");
  const auto done2 = value_after(o.out, "Target 2 of 2", "Successful requests:");
  const auto done_all = value_after(o.out, "Combined Result", "Successful requests:");
  ASSERT_TRUE(done1 && done2 && done_all) << o.out;
  EXPECT_EQ(*done1, 24);
  EXPECT_EQ(*done2, 24);
  EXPECT_EQ(*done_all, *done1 + *done2);
  // One combined progress bar on stderr (tqdm's "n/total" counts both targets' requests).
  EXPECT_NE(o.err.find("48/48"), std::string::npos) << o.err;

  // A result and a records file per target, each naming its target; one t0 for both.
  const std::vector<json> results = results_in(dir);
  ASSERT_EQ(results.size(), 2u);
  std::set<std::string> names, urls;
  double wall = 0;
  int64_t completed = 0;
  for (const json& r : results) {
    const json& target = r["servebench"]["target"];
    names.insert(target["name"].get<std::string>());
    urls.insert(target["url"].get<std::string>());
    EXPECT_EQ(target["count"], 2);
    EXPECT_EQ(r["completed"], 24);
    completed += r["completed"].get<int64_t>();
    wall = std::max(wall, r["duration"].get<double>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"target1", "target2"}));
  EXPECT_EQ(urls.size(), 2u);  // two simulators
  EXPECT_EQ(results[0]["servebench"]["client"]["t0_mono_ns"],
            results[1]["servebench"]["client"]["t0_mono_ns"]);
  // The combined throughput is the sum over the longest duration (both timed from one t0).
  const auto combined_rate = value_after(o.out, "Combined Result", "Request throughput (req/s):");
  ASSERT_TRUE(combined_rate);
  EXPECT_NEAR(*combined_rate, static_cast<double>(completed) / wall, 0.01);
  size_t records = 0;
  for (const std::string& name : dir.files()) records += name.ends_with(".records.jsonl");
  EXPECT_EQ(records, 2u);

  // The combined figures are saved beside the results, naming each target's result file; a
  // report of the directory reads the two runs and not the combined file.
  json saved;
  for (const std::string& name : dir.files())
    if (name.ends_with(".combined.json")) saved = json::parse(read_file(dir.path() + "/" + name));
  ASSERT_TRUE(saved.contains("servebench_combined")) << dir.files().size();
  const json& c = saved["servebench_combined"];
  EXPECT_EQ(c["completed"], completed);
  EXPECT_EQ(c["targets"], 2);
  EXPECT_DOUBLE_EQ(c["wall_s"].get<double>(), wall);
  ASSERT_EQ(c["per_target"].size(), 2u);
  for (const json& t : c["per_target"]) {
    EXPECT_EQ(read_file(t["result_file"].get<std::string>()).empty(), false);
  }
  Outcome report = run({"report", dir.path(), "--format", "csv"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(count_of(report.out, "\n"), 3u) << report.out;  // the header and two runs
}

TEST(RunTargets, TwoServersByUrlListWithOwnModelsAndNoCredentialsShown) {
  const int port1 = free_port(), port2 = free_port();
  Background sim1({"sim", "--port", std::to_string(port1), "--served-model-name", "model-a",
                   "--ttft-ms", "5", "--itl-ms", "1"});
  Background sim2({"sim", "--port", std::to_string(port2), "--served-model-name", "model-b",
                   "--ttft-ms", "5", "--itl-ms", "1"});
  ASSERT_TRUE(sim1.wait_for_port(port1, 10)) << sim1.log();
  ASSERT_TRUE(sim2.wait_for_port(port2, 10)) << sim2.log();
  TempDir dir;
  // The flag repeated, the first URL with credentials that must never be printed.
  Outcome o = run(
      {"run", "--base-url", "http://user:s3cr3t@127.0.0.1:" + std::to_string(port1), "--base-url",
       "http://127.0.0.1:" + std::to_string(port2), "--model", "model-a,model-b", "--tokenizer",
       "builtin", "--num-prompts", "10", "--random-input-len", "8", "--random-output-len", "4",
       "--disable-tqdm", "--save-result", "--result-dir", dir.path()},
      30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.out.find("s3cr3t"), std::string::npos);
  EXPECT_EQ(o.err.find("s3cr3t"), std::string::npos);
  for (const std::string& name : dir.files())
    EXPECT_EQ(read_file(dir.path() + "/" + name).find("s3cr3t"), std::string::npos) << name;
  std::set<std::string> models;
  for (const json& r : results_in(dir)) {
    models.insert(r["model_id"].get<std::string>());
    EXPECT_EQ(r["completed"], 10);
  }
  EXPECT_EQ(models, (std::set<std::string>{"model-a", "model-b"}));
  EXPECT_EQ(value_after(o.out, "Combined Result", "Successful requests:"), 20);

  // A target that cannot be reached stops both before anything is sent.
  Outcome down =
      run({"run", "--base-url",
           "http://127.0.0.1:" + std::to_string(port1) +
               ",http://127.0.0.1:" + std::to_string(free_port()),
           "--model", "model-a", "--tokenizer", "builtin", "--num-prompts", "5", "--disable-tqdm"},
          20);
  EXPECT_EQ(down.exit_code, 4) << down.out << down.err;
  EXPECT_EQ(down.out.find("Serving Benchmark Result"), std::string::npos) << down.out;
  EXPECT_NE(down.err.find("target 2 of 2 failed before the common start"), std::string::npos)
      << down.err;
}

TEST(RunStages, ThreeShortStagesGiveThreeResultsAndTheInferencePerfTable) {
  TempDir dir;
  Outcome o =
      run({"run", "--stages", "20:0.5,40:0.5,60:0.5", "--stage-interval", "0.1",
           "--random-input-len", "16", "--random-output-len", "8", "--sim-ttft-ms", "5",
           "--sim-itl-ms", "1", "--disable-tqdm", "--save-result", "--result-dir", dir.path()},
          30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(count_of(o.out, "Serving Benchmark Result"), 3u);
  for (const char* line : {"Stage: stage_0 of 3, 10 requests over 0.5 s, constant arrivals",
                           "Stage: stage_1 of 3, 20 requests", "Stage: stage_2 of 3, 30 requests"})
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  // The run ends with the stages side by side, as inference-perf's table.
  const size_t table = o.out.find("Sweep: 3 runs");
  ASSERT_NE(table, std::string::npos) << o.out;
  EXPECT_NE(o.out.find("| qps | total_requests |", table), std::string::npos) << o.out;

  // One result per stage, rate × duration requests each.
  const std::vector<json> results = results_in(dir);
  ASSERT_EQ(results.size(), 3u);
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i]["servebench"]["stage"]["name"], "stage_" + std::to_string(i));
    EXPECT_EQ(results[i]["completed"], 10 * static_cast<int>(i + 1));
  }

  Outcome report = run({"report", dir.path(), "--format", "inference-perf"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::vector<std::string> lines = lines_of(report.out);
  std::vector<std::string> rows;
  for (const std::string& line : lines)
    if (std::regex_match(line, std::regex(R"(\| [0-9]+ +\| [0-9]+ +\|.*)"))) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << report.out;
  EXPECT_TRUE(std::regex_search(rows[0], std::regex(R"(^\| 20 +\| 10 +\| 16\.0 )"))) << rows[0];
  EXPECT_TRUE(std::regex_search(rows[1], std::regex(R"(^\| 40 +\| 20 +\|)"))) << rows[1];
  EXPECT_TRUE(std::regex_search(rows[2], std::regex(R"(^\| 60 +\| 30 +\|)"))) << rows[2];
}

TEST(RunStages, BadStagesAreOneLineUsageErrors) {
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{"--stages", "1-60"},
                                             {"--stages", "0.1:5"},
                                             {"--stages", "1:5", "--request-rate", "3"},
                                             {"--stage-arrival", "poisson"},
                                             {"--stages", "1:5", "--stage-arrival", "burst"},
                                             {"--stages", "1:5", "--sim-instances", "2"}}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args, 10);
    EXPECT_EQ(o.exit_code, 2) << extra[0] << ": " << o.err;
    const std::vector<std::string> lines = lines_of(o.err);
    ASSERT_EQ(lines.size(), 1u) << o.err;
    EXPECT_EQ(lines[0].rfind("servebench: --", 0), 0u) << lines[0];
  }
}

}  // namespace
}  // namespace servebench::itest
