// `servebench run --shard K/N` against one `servebench sim`: three shards started together with
// --start-at send, between them, exactly the requests of the unsharded run.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace servebench::itest {
namespace {

using json = nlohmann::json;

std::vector<json> records_of(const std::string& path) {
  std::vector<json> out;
  for (const auto& line : lines_of(read_file(path))) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

std::vector<std::string> bench_args(const std::string& url, const std::string& dir) {
  return {"run",
          "--base-url",
          url,
          "--model",
          "m",
          "--num-prompts",
          "30",
          "--random-input-len",
          "16",
          "--random-output-len",
          "6",
          "--request-rate",
          "60",
          "--max-concurrency",
          "5",
          "--seed",
          "11",
          "--disable-tqdm",
          "--save-result",
          "--result-dir",
          dir,
          "--result-filename",
          "result.json",
          "--records",
          dir + "/result.records.jsonl"};
}

TEST(RunShard, ThreeShardsTogetherSendTheUnshardedRun) {
  const int port = free_port();
  Background sim({"sim", "--port", std::to_string(port), "--served-model-name", "m", "--ttft-ms",
                  "5", "--itl-ms", "1"});
  ASSERT_TRUE(sim.wait_for_port(port, 10)) << sim.log();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);

  TempDir whole_dir;
  Outcome whole = run(bench_args(url, whole_dir.path()));
  ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
  const json unsharded = json::parse(read_file(whole_dir.path() + "/result.json"));
  EXPECT_FALSE(unsharded["servebench"].contains("shard"));  // unchanged without --shard
  EXPECT_EQ(whole.out.find("Shard "), std::string::npos);

  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const double start_at = std::chrono::duration<double>(now).count() + 3.0;
  char start_text[64];
  std::snprintf(start_text, sizeof start_text, "%.3f", start_at);
  std::vector<TempDir> dirs(3);
  std::vector<std::future<Outcome>> shards;
  for (int k = 0; k < 3; ++k) {
    std::vector<std::string> args = bench_args(url, dirs[static_cast<size_t>(k)].path());
    args.insert(args.end(), {"--shard", std::to_string(k) + "/3", "--start-at", start_text});
    shards.push_back(std::async(std::launch::async, [args] { return run(args); }));
  }
  std::set<uint64_t> indices;
  size_t records = 0, planned = 0;
  int64_t completed = 0, input_tokens = 0, output_tokens = 0;
  std::set<std::string> hashes;
  for (int k = 0; k < 3; ++k) {
    const Outcome o = shards[static_cast<size_t>(k)].get();
    ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
    EXPECT_NE(o.out.find("Shard " + std::to_string(k) + "/3: "), std::string::npos) << o.out;
    const std::string dir = dirs[static_cast<size_t>(k)].path();
    const json r = json::parse(read_file(dir + "/result.json"));
    const json& shard = r["servebench"]["shard"];
    EXPECT_EQ(shard["index"], k);
    EXPECT_EQ(shard["count"], 3);
    EXPECT_EQ(shard["start_at_ns"].get<int64_t>() / 1'000'000,
              static_cast<int64_t>(std::llround(start_at * 1000)));
    EXPECT_GE(shard["t0_wall_ns"].get<int64_t>(), shard["start_at_ns"].get<int64_t>());
    EXPECT_GE(shard["started_late_ns"].get<int64_t>(), 0);
    EXPECT_FALSE(shard["host"].get<std::string>().empty());
    EXPECT_EQ(shard["metric_options"]["percentiles"], json::array({99.0}));
    EXPECT_EQ(r["num_prompts"], 30);  // the whole run's flags
    EXPECT_EQ(r["max_concurrency"], 5);
    hashes.insert(shard["plan_hash"].get<std::string>());
    planned += shard["requests_planned"].get<size_t>();
    completed += r["completed"].get<int64_t>();
    input_tokens += r["total_input_tokens"].get<int64_t>();
    output_tokens += r["total_output_tokens"].get<int64_t>();
    for (const json& rec : records_of(dir + "/result.records.jsonl")) {
      ++records;
      const uint64_t index = rec["index"].get<uint64_t>();
      EXPECT_EQ(index % 3, static_cast<uint64_t>(k));
      EXPECT_TRUE(indices.insert(index).second) << "request " << index << " in two shards";
    }
  }
  EXPECT_EQ(hashes.size(), 1u);  // one plan
  EXPECT_EQ(planned, 30u);
  EXPECT_EQ(records, 30u);
  EXPECT_EQ(indices.size(), 30u);
  EXPECT_EQ(completed, unsharded["completed"].get<int64_t>());
  EXPECT_EQ(input_tokens, unsharded["total_input_tokens"].get<int64_t>());
  EXPECT_EQ(output_tokens, unsharded["total_output_tokens"].get<int64_t>());
}

TEST(RunShard, WhatCannotBeSplitIsRefusedInOneLine) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"run", "--shard", "0/3", "--profile", "sweep"},
        std::vector<std::string>{"run", "--shard", "0/3", "--max-concurrency", "2"},
        std::vector<std::string>{"run", "--shard", "3/3"},
        std::vector<std::string>{"run", "--start-at", "1795683600"},
        std::vector<std::string>{"run", "--shard", "0/2", "--start-at", "tomorrow"}}) {
    Outcome o = run(args);
    EXPECT_EQ(o.exit_code, 2) << args[2] << o.err;
    EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
  }
}

TEST(RunShard, AutoReadsTheSlurmTask) {
  setenv("SLURM_PROCID", "1", 1);
  setenv("SLURM_NTASKS", "2", 1);
  TempDir dir;
  Outcome o = run({"run", "--shard", "auto", "--num-prompts", "10", "--random-input-len", "8",
                   "--random-output-len", "4", "--disable-tqdm", "--save-result", "--result-dir",
                   dir.path(), "--result-filename", "r.json"});
  unsetenv("SLURM_PROCID");
  unsetenv("SLURM_NTASKS");
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const json r = json::parse(read_file(dir.path() + "/r.json"));
  EXPECT_EQ(r["servebench"]["shard"]["index"], 1);
  EXPECT_EQ(r["servebench"]["shard"]["count"], 2);
  EXPECT_EQ(r["servebench"]["shard"]["requests_planned"], 5);
  EXPECT_EQ(r["servebench"]["shard"]["start_at_ns"], nullptr);
}

}  // namespace
}  // namespace servebench::itest
