#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "merge/merge.h"

namespace servebench::merge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A finished request: sent at index ms, TTFT 10..16 ms, `tokens` chunks 2 ms apart.
record::RequestRecord make_record(uint64_t index) {
  record::RequestRecord r;
  r.index = index;
  r.request_id = "r" + std::to_string(index);
  r.intended_ns = static_cast<int64_t>(index) * 1'000'000;
  r.sent_ns = r.intended_ns + 50'000;
  r.first_byte_ns = r.sent_ns + static_cast<int64_t>(10 + index % 7) * 1'000'000;
  r.first_token_ns = r.first_byte_ns;
  const int tokens = 3 + static_cast<int>(index % 5);
  for (int i = 0; i < tokens; ++i) r.chunk_ns.push_back(r.first_token_ns + i * 2'000'000);
  r.last_token_ns = r.chunk_ns.back();
  r.done_ns = r.last_token_ns + 100'000;
  r.prompt_tokens = 20 + static_cast<int32_t>(index % 3);
  r.expected_output_tokens = tokens;
  r.server_prompt_tokens = r.prompt_tokens;
  r.server_completion_tokens = tokens;
  r.http_status = 200;
  r.success = index % 11 != 4;  // a few failures
  if (!r.success) {
    r.http_status = 503;
    r.chunk_ns.clear();
    r.first_token_ns = r.last_token_ns = -1;
    r.error = "HTTP 503";
  }
  return r;
}

std::vector<record::RequestRecord> make_run(size_t n) {
  std::vector<record::RequestRecord> out;
  for (size_t i = 0; i < n; ++i) out.push_back(make_record(i));
  return out;
}

double duration_of(const std::vector<record::RequestRecord>& rs) {
  int64_t end = 0;
  for (const auto& r : rs) end = std::max(end, r.done_ns);
  return static_cast<double>(end) / 1e9;
}

metrics::Options options_50_99() {
  metrics::Options mo;
  mo.percentiles = {50, 99};
  return mo;
}

report::RunInfo info_all_metrics() {
  report::RunInfo info;
  info.model_id = "m";
  info.tokenizer_id = "t";
  info.num_prompts = 60;
  info.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  info.date = "20261126-070000";
  return info;
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("merge_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes one input directory: its records JSONL and its result (with `shard` when given).
  std::string write_input(const std::string& name, const std::vector<record::RequestRecord>& rs,
                          double duration_s, const std::optional<ShardBlock>& shard) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    std::ofstream recs(dir / "run.records.jsonl");
    for (const auto& r : rs) recs << record::to_json_line(r) << '\n';
    metrics::Summary s = metrics::compute(rs, duration_s, options_50_99());
    json result = report::vllm_result_json(s, info_all_metrics(), rs, false);
    result["servebench"]["records_file"] = "/elsewhere/run.records.jsonl";  // as run wrote it
    if (shard) result["servebench"]["shard"] = shard_block_json(*shard);
    std::ofstream(dir / "run.json") << result.dump();
    return dir.string();
  }

  // The run split by index modulo n, every shard starting at the same wall-clock instant.
  std::vector<std::string> write_shards(const std::vector<record::RequestRecord>& all, int n,
                                        const std::string& hash = "h1") {
    std::vector<std::string> dirs;
    for (int k = 0; k < n; ++k) {
      std::vector<record::RequestRecord> mine;
      for (const auto& r : all) {
        if (r.index % n == static_cast<uint64_t>(k)) mine.push_back(r);
      }
      ShardBlock b;
      b.index = k;
      b.count = n;
      b.plan_hash = hash;
      b.host = "host" + std::to_string(k);
      b.t0_wall_ns = 1'700'000'000'000'000'000;
      b.requests_planned = static_cast<int64_t>(mine.size());
      dirs.push_back(write_input("shard" + std::to_string(k), mine, duration_of(all), b));
    }
    return dirs;
  }

  fs::path root_;
};

void expect_same(const metrics::Distribution& a, const metrics::Distribution& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_DOUBLE_EQ(a.mean, b.mean);
  EXPECT_DOUBLE_EQ(a.median, b.median);
  ASSERT_EQ(a.percentiles.size(), b.percentiles.size());
  for (size_t i = 0; i < a.percentiles.size(); ++i)
    EXPECT_DOUBLE_EQ(a.percentiles[i].second, b.percentiles[i].second);
}

TEST_F(MergeTest, ShardsSplitByModuloMergeToTheWholeRunsFigures) {
  const auto all = make_run(60);
  const metrics::Summary whole = metrics::compute(all, duration_of(all), options_50_99());
  Merged m = merge(load_inputs(write_shards(all, 3), false), Options{});
  EXPECT_EQ(m.summary.vllm.completed, whole.vllm.completed);
  EXPECT_EQ(m.summary.vllm.failed, whole.vllm.failed);
  EXPECT_EQ(m.summary.vllm.total_input, whole.vllm.total_input);
  EXPECT_EQ(m.summary.vllm.total_output, whole.vllm.total_output);
  EXPECT_DOUBLE_EQ(m.summary.vllm.duration_s, whole.vllm.duration_s);
  expect_same(m.summary.vllm.ttft_ms, whole.vllm.ttft_ms);
  expect_same(m.summary.vllm.itl_ms, whole.vllm.itl_ms);
  expect_same(m.summary.vllm.e2el_ms, whole.vllm.e2el_ms);
  // The percentiles read off the shards' keys: p50 and p99 written back.
  EXPECT_DOUBLE_EQ(m.result["p99_ttft_ms"].get<double>(), whole.vllm.ttft_ms.percentiles[1].second);
  EXPECT_TRUE(m.result.contains("p50_e2el_ms"));
  const json& block = m.result["servebench"]["merge"];
  EXPECT_EQ(block["count"], 3);
  EXPECT_EQ(block["present"], json::array({0, 1, 2}));
  EXPECT_FALSE(block["partial"].get<bool>());
  EXPECT_EQ(block["timeline"], "wall_clock");
  ASSERT_EQ(block["shards"].size(), 3u);
  EXPECT_EQ(block["shards"][1]["host"], "host1");
  EXPECT_EQ(block["shards"][1]["requests_sent"], 20);
  EXPECT_EQ(m.result["model_id"], "m");
  EXPECT_EQ(m.result["num_prompts"], 60);
  EXPECT_NE(shard_table(block).find("host2"), std::string::npos);
}

// Requests a shard never sent (shard 0 counts those --duration cut from the whole plan; each
// counts its own left by SIGINT/SIGTERM) add up, and one interrupted shard makes the run so.
TEST_F(MergeTest, RequestsNotSentAddUpAndAnInterruptedShardMarksTheRun) {
  const auto dirs = write_shards(make_run(30), 3);
  const std::vector<std::pair<size_t, bool>> states = {{7, false}, {0, true}, {2, false}};
  for (size_t k = 0; k < dirs.size(); ++k) {
    const fs::path file = fs::path(dirs[k]) / "run.json";
    json result = json::parse(std::ifstream(file));
    result["servebench"]["client"] = {{"not_sent", states[k].first},
                                      {"interrupted", states[k].second}};
    std::ofstream(file) << result.dump();
  }
  Merged m = merge(load_inputs(dirs, false), Options{});
  EXPECT_EQ(m.info.not_sent, 9u);
  EXPECT_EQ(m.result["servebench"]["client"]["not_sent"], 9);
  EXPECT_TRUE(m.result["servebench"]["client"]["interrupted"].get<bool>());
}

TEST_F(MergeTest, AMissingShardIsAnErrorNamingItUnlessPartial) {
  const auto all = make_run(30);
  auto dirs = write_shards(all, 3);
  dirs.erase(dirs.begin() + 1);
  try {
    merge(load_inputs(dirs, false), Options{});
    FAIL() << "merged with a shard missing";
  } catch (const core::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "merge: shard 1 of 3 missing (plan_hash 'h1'); merge the others with --partial");
  }
  Options partial;
  partial.partial = true;
  Merged m = merge(load_inputs(dirs, false), partial);
  EXPECT_EQ(m.missing, std::vector<int>{1});
  EXPECT_TRUE(m.result["servebench"]["merge"]["partial"].get<bool>());
  EXPECT_EQ(m.summary.extras.requests_sent, 20u);
}

TEST_F(MergeTest, ShardsOfAnotherPlanOrTwiceTheSameShardAreRejected) {
  const auto all = make_run(20);
  auto dirs = write_shards(all, 2);
  ShardBlock other;
  other.index = 1;
  other.count = 2;
  other.plan_hash = "h2";
  const std::string stranger = write_input("stranger", {make_record(1)}, 0.1, other);
  try {
    merge(load_inputs({dirs[0], stranger}, false), Options{});
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("stranger/run.json: plan_hash 'h2' differs from 'h1'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(merge(load_inputs({dirs[0], dirs[0]}, false), Options{}), core::Error);
}

TEST_F(MergeTest, ShardsArePutOnOneWallClockTimelineAndTheDurationIsTheUnion) {
  // Shard 1 started 3 s after shard 0; each ran for 1 s: the union is 2 s, the span 4 s.
  ShardBlock a, b;
  a.count = b.count = 2;
  b.index = 1;
  a.plan_hash = b.plan_hash = "h";
  a.t0_wall_ns = 5'000'000'000;
  b.t0_wall_ns = 8'000'000'000;
  const std::string da = write_input("a", {make_record(0)}, 1.0, a);
  const std::string db = write_input("b", {make_record(1)}, 1.0, b);
  Merged m = merge(load_inputs({db, da}, false), Options{});
  EXPECT_DOUBLE_EQ(m.summary.vllm.duration_s, 2.0);
  EXPECT_DOUBLE_EQ(m.result["servebench"]["merge"]["span_s"].get<double>(), 4.0);
  ASSERT_EQ(m.records.size(), 2u);
  EXPECT_EQ(m.records[1].sent_ns, make_record(1).sent_ns + 3'000'000'000);
  EXPECT_EQ(m.records[0].sent_ns, make_record(0).sent_ns);
}

TEST_F(MergeTest, IndependentRunsNeedRunsAndAddUp) {
  const auto run = make_run(10);
  const std::string a = write_input("a", run, duration_of(run), std::nullopt);
  const std::string b = write_input("b", run, duration_of(run), std::nullopt);
  try {
    load_inputs({a}, false);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds no shard result"), std::string::npos);
  }
  Options runs;
  runs.runs = true;
  Merged m = merge(load_inputs({a, b}, true), runs);
  const metrics::Summary one = metrics::compute(run, duration_of(run), options_50_99());
  EXPECT_EQ(m.summary.vllm.completed, 2 * one.vllm.completed);
  EXPECT_EQ(m.summary.vllm.total_output, 2 * one.vllm.total_output);
  EXPECT_EQ(m.result["num_prompts"], 120);
  EXPECT_EQ(m.result["servebench"]["merge"]["timeline"], "aligned_at_t0");
  EXPECT_EQ(m.records[0].index, 0u);
  EXPECT_EQ(m.records[1].index, 1u);  // run b's request 0
}

TEST_F(MergeTest, AResultWhoseRecordsAreGoneIsNamed) {
  const auto all = make_run(4);
  auto dirs = write_shards(all, 1);
  fs::remove(fs::path(dirs[0]) / "run.records.jsonl");
  try {
    load_inputs(dirs, false);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("run.json: its records file '/elsewhere/"),
              std::string::npos)
        << e.what();
  }
}

TEST(ShardBlock, BadValuesAreNamed) {
  EXPECT_THROW(parse_shard_block(json{{"index", 3}, {"count", 2}, {"plan_hash", "h"}}, "f"),
               core::Error);
  try {
    parse_shard_block(json{{"index", "x"}, {"count", 2}, {"plan_hash", "h"}}, "f.json");
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(std::string(e.what()), "f.json: servebench.shard.index: has the wrong type (string)");
  }
  const ShardBlock b =
      parse_shard_block(json{{"index", 1}, {"count", 2}, {"plan_hash", "h"}, {"host", "n1"}}, "f");
  EXPECT_EQ(parse_shard_block(shard_block_json(b), "g").host, "n1");
}

}  // namespace
}  // namespace servebench::merge
