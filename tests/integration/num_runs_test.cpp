// `servebench run --num-runs 3` end to end against the embedded simulator: every run's console
// block and the repeats block, one result JSON whose vLLM keys keep their types (the mean across
// runs) with each run under servebench.runs and each figure's statistics under
// servebench.repeats, one records file per run, the arrival seeds, and the usage errors.
#include <gtest/gtest.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

// 12 short requests at 400/s, three runs, two warmups, TTFT jittered so that runs differ.
std::vector<std::string> repeated_run(const std::string& dir, std::vector<std::string> more) {
  std::istringstream flags(
      "run --num-prompts 12 --request-rate 400 --random-input-len 16 --random-output-len 4 "
      "--sim-ttft-ms 2 --sim-itl-ms 0.5 --sim-ttft-jitter-ms 1 --num-runs 3 --num-warmups 2 "
      "--percentile-metrics ttft,tpot,itl,e2el --save-result --disable-tqdm");
  std::vector<std::string> args{std::istream_iterator<std::string>(flags), {}};
  args.insert(args.end(), {"--result-dir", dir});
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

json only_result(const TempDir& dir) {
  const std::vector<std::string> results = dir.files_ending(".json");
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? json() : json::parse(read_file(dir.path() + "/" + results.front()));
}

TEST(NumRuns, ThreeRunsGiveOneResultWithRepeatsAndEveryRunKept) {
  TempDir dir;
  const Outcome o = run(repeated_run(dir.path(), {}), 120);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // Each run says itself and prints vLLM's block; the repeats block follows.
  for (const char* line : {"Run 1 of 3 (arrival seed 0)", "Run 2 of 3 (arrival seed 1)",
                           "Run 3 of 3 (arrival seed 2)"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << o.out;
  }
  size_t blocks = 0;
  for (size_t at = 0; (at = o.out.find("Serving Benchmark Result", at)) != std::string::npos; ++at)
    ++blocks;
  EXPECT_EQ(blocks, 3u);
  EXPECT_EQ(o.out.find("Warming up"), o.out.rfind("Warming up")) << "warmups run once";
  const size_t repeats = o.out.find("Repeated Runs (3 runs)");
  ASSERT_NE(repeats, std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Successful requests:                     12.00 ± 0.00 (sd 0.00, 3 runs)",
                       repeats),
            std::string::npos)
      << o.out.substr(repeats);
  EXPECT_NE(o.out.find("Mean TTFT (ms):", repeats), std::string::npos);
  EXPECT_NE(o.out.find("P99 E2EL (ms):", repeats), std::string::npos);

  const json r = only_result(dir);
  ASSERT_TRUE(r.is_object());
  // vLLM's keys keep vLLM's types: integers stay integers, figures are numbers.
  EXPECT_TRUE(r["completed"].is_number_integer());
  EXPECT_EQ(r["completed"], 12);
  EXPECT_TRUE(r["total_input_tokens"].is_number_integer());
  EXPECT_TRUE(r["mean_ttft_ms"].is_number_float());
  EXPECT_TRUE(r["latencies"].is_array());
  EXPECT_EQ(r["latencies"].size(), 36u);  // the three runs' requests
  const json& sb = r["servebench"];
  ASSERT_EQ(sb["runs"].size(), 3u);
  double sum = 0;
  std::set<std::string> records;
  for (size_t i = 0; i < 3; ++i) {
    const json& run_i = sb["runs"][i];
    EXPECT_EQ(run_i["run"], i + 1);
    EXPECT_EQ(run_i["seed"], i);
    EXPECT_EQ(run_i["completed"], 12);
    EXPECT_FALSE(run_i.contains("latencies"));
    sum += run_i["mean_ttft_ms"].get<double>();
    const std::string file = run_i["servebench"]["records_file"].get<std::string>();
    EXPECT_NE(file.find(".run" + std::to_string(i + 1) + ".jsonl"), std::string::npos) << file;
    records.insert(file);
  }
  EXPECT_EQ(records.size(), 3u);
  EXPECT_NEAR(r["mean_ttft_ms"].get<double>(), sum / 3, 1e-9);
  const json& ttft = sb["repeats"]["mean_ttft_ms"];
  EXPECT_EQ(ttft["n"], 3);
  EXPECT_NEAR(ttft["mean"].get<double>(), sum / 3, 1e-9);
  EXPECT_LE(ttft["ci95_low"].get<double>(), ttft["mean"].get<double>());
  EXPECT_GE(ttft["ci95_high"].get<double>(), ttft["mean"].get<double>());
  EXPECT_GT(ttft["sd"].get<double>(), 0);  // the simulator's TTFT jitter differs run to run
  for (const char* key : {"request_throughput", "output_throughput", "p99_itl_ms", "completed"})
    EXPECT_TRUE(sb["repeats"].contains(key)) << key;
  EXPECT_EQ(sb["repeat_method"]["warmups"], "once, before the first run");
  // Each run's records file: its 12 requests (the warmups in the first).
  size_t lines = 0;
  for (const std::string& f : dir.files()) {
    if (f.find(".run") == std::string::npos || !f.ends_with(".jsonl")) continue;
    for (const std::string& l : lines_of(read_file(dir.path() + "/" + f))) lines += !l.empty();
  }
  EXPECT_EQ(lines, 36u + 2u);

  // The report layouts read it back with intervals.
  const Outcome md = run({"report", dir.path(), "--format", "vllm-md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find(" ± "), std::string::npos) << md.out;
}

TEST(NumRuns, AGivenSeedFixesTheArrivalsOfEveryRun) {
  TempDir dir;
  const Outcome o = run(repeated_run(dir.path(), {"--seed", "7"}), 120);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Run 3 of 3 (arrival seed 7)"), std::string::npos) << o.out;
  const json r = only_result(dir);
  for (const json& run_i : r["servebench"]["runs"]) EXPECT_EQ(run_i["seed"], 7);
}

TEST(NumRuns, UsageErrorsNameTheFlag) {
  const Outcome zero = run({"run", "--num-runs", "0", "--num-prompts", "1"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--num-runs"), std::string::npos) << zero.err;
  const Outcome shard = run({"run", "--num-runs", "2", "--shard", "0/2"});
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_NE(shard.err.find("--num-runs"), std::string::npos) << shard.err;
  EXPECT_NE(shard.err.find("--shard"), std::string::npos) << shard.err;
}

}  // namespace
}  // namespace servebench::itest
