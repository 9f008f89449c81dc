// `servebench run` with each dataset against the embedded simulator, on the committed fixtures
// (tests/fixtures/datasets), and what a bad dataset file does to the command.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

const std::string kFixtures = std::string(SERVEBENCH_SOURCE_DIR) + "/tests/fixtures/datasets/";

std::vector<json> jsonl(const std::string& path) {
  std::vector<json> out;
  for (const auto& line : lines_of(read_file(path))) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

struct DatasetRun {
  Outcome outcome;
  json result;
  std::map<uint64_t, json> records;  // by plan index
};

const std::vector<std::string> kFastEmbedded = {"--sim-ttft-ms", "2", "--sim-itl-ms", "0.5"};

// A run with the given dataset flags, on the target `target_args` names (by default a fast
// embedded simulator); result and records read back.
DatasetRun run_dataset(const std::vector<std::string>& dataset_args,
                       const std::vector<std::string>& target_args = kFastEmbedded) {
  TempDir dir;
  std::vector<std::string> args = {"run",    "--disable-tqdm", "--save-result", "--result-filename",
                                   "r.json", "--result-dir",   dir.path()};
  args.insert(args.end(), target_args.begin(), target_args.end());
  args.insert(args.end(), dataset_args.begin(), dataset_args.end());
  DatasetRun r;
  r.outcome = run(args, 90);
  if (r.outcome.exit_code != 0) return r;
  r.result = json::parse(read_file(dir.path() + "/r.json"));
  for (auto& rec : jsonl(dir.path() + "/r.records.jsonl")) {
    r.records[rec["index"].get<uint64_t>()] = rec;
  }
  return r;
}

// n requests made and succeeded; `asked` (--num-prompts, 0: n) is the result's num_prompts, as
// vLLM records the flag even when the dataset gives fewer.
void expect_all_succeeded(const DatasetRun& r, size_t n, const std::string& dataset,
                          size_t asked = 0) {
  ASSERT_EQ(r.outcome.exit_code, 0) << r.outcome.out << r.outcome.err;
  EXPECT_EQ(console_value(r.outcome.out, "Successful requests:"), static_cast<double>(n))
      << r.outcome.out;
  EXPECT_EQ(r.result["completed"], n);
  EXPECT_EQ(r.result["num_prompts"], asked == 0 ? n : asked);
  EXPECT_EQ(r.result["servebench"]["dataset"]["name"], dataset);
  EXPECT_EQ(r.records.size(), n);
  int64_t input_tokens = 0;
  for (const auto& [index, rec] : r.records) {
    EXPECT_TRUE(rec["success"].get<bool>()) << rec.dump();
    // The simulator counts the prompt it received with the same tokenizer.
    EXPECT_EQ(rec["server_prompt_tokens"], rec["prompt_tokens"]) << rec.dump();
    input_tokens += rec["prompt_tokens"].get<int64_t>();
  }
  EXPECT_EQ(r.result["total_input_tokens"], input_tokens);
}

TEST(DatasetRun, ShareGptFixtureIsFilteredSeededAndReproducible) {
  const std::vector<std::string> args = {
      "--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
      "--num-prompts",  "25",       "--seed",         "3"};
  DatasetRun a = run_dataset(args);
  expect_all_succeeded(a, 25, "sharegpt");
  EXPECT_EQ(a.result["servebench"]["dataset"]["path"], kFixtures + "sharegpt.json");
  for (const auto& [index, rec] : a.records) {
    EXPECT_GE(rec["prompt_tokens"].get<int>(), 4);
    EXPECT_LE(rec["prompt_tokens"].get<int>(), 1024);
    EXPECT_GE(rec["expected_output_tokens"].get<int>(), 4);
  }
  DatasetRun b = run_dataset(args);
  ASSERT_EQ(b.outcome.exit_code, 0) << b.outcome.err;
  for (const auto& [index, rec] : a.records) {
    EXPECT_EQ(b.records[index]["prompt_tokens"], rec["prompt_tokens"]) << index;
    EXPECT_EQ(b.records[index]["expected_output_tokens"], rec["expected_output_tokens"]);
  }
}

TEST(DatasetRun, ShareGptTooSmallIsOversampledWithANotice) {
  DatasetRun r =
      run_dataset({"--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
                   "--num-prompts", "50", "--sharegpt-output-len", "6"});
  expect_all_succeeded(r, 50, "sharegpt");
  EXPECT_NE(r.outcome.err.find("only 42 of 46 rows"), std::string::npos) << r.outcome.err;
  for (const auto& [index, rec] : r.records) EXPECT_EQ(rec["expected_output_tokens"], 6);

  DatasetRun fewer =
      run_dataset({"--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
                   "--num-prompts", "50", "--no-oversample"});
  expect_all_succeeded(fewer, 40, "sharegpt", 50);
}

// Every conversation's turns: each later turn due when the one before ended, sent after it, with
// the history in its prompt; at most `max_active` conversations under way at once (0 = any).
void expect_conversations(const DatasetRun& r, size_t conversations, int max_active) {
  ASSERT_EQ(r.outcome.exit_code, 0) << r.outcome.out << r.outcome.err;
  const json& multi = r.result["servebench"]["dataset"]["multi_turn"];
  EXPECT_EQ(multi["conversations"], conversations) << r.result["servebench"].dump();
  EXPECT_EQ(r.result["completed"], r.records.size());
  EXPECT_EQ(r.result["num_prompts"], conversations);  // --num-prompts: conversations, not turns
  std::map<int64_t, std::vector<json>> by_conversation;
  for (const auto& [index, rec] : r.records) {
    EXPECT_TRUE(rec["success"].get<bool>()) << rec.dump();
    by_conversation[rec["conversation"].get<int64_t>()].push_back(rec);  // index order
  }
  ASSERT_EQ(by_conversation.size(), conversations);
  size_t later_turns = 0;
  std::vector<std::pair<int64_t, int>> edges;  // (time, +1 start / -1 end)
  for (const auto& [conversation, turns] : by_conversation) {
    for (size_t t = 0; t < turns.size(); ++t) {
      const json& rec = turns[t];
      EXPECT_EQ(rec["turn"], t) << rec.dump();
      if (t == 0) continue;
      ++later_turns;
      const json& previous = turns[t - 1];
      EXPECT_EQ(rec["intended_ns"], previous["done_ns"]);
      EXPECT_GE(rec["sent_ns"].get<int64_t>(), previous["done_ns"].get<int64_t>());
      // The simulator counted the whole history: the previous prompt and its answer are in it.
      EXPECT_GE(rec["server_prompt_tokens"].get<int64_t>(),
                previous["server_prompt_tokens"].get<int64_t>() +
                    previous["server_completion_tokens"].get<int64_t>())
          << rec.dump();
    }
    edges.emplace_back(turns.front()["sent_ns"].get<int64_t>(), 1);
    edges.emplace_back(turns.back()["done_ns"].get<int64_t>(), -1);
  }
  EXPECT_GT(later_turns, 0u);
  if (max_active > 0) {
    std::sort(edges.begin(), edges.end());  // an end before a start at the same ns
    int active = 0;
    for (const auto& [time, delta] : edges) {
      active += delta;
      EXPECT_LE(active, max_active) << "at " << time;
    }
  }
}

TEST(DatasetRun, ShareGptMultiTurnReplaysConversationsWithTheirHistory) {
  for (const char* backend : {"openai", "openai-chat"}) {
    SCOPED_TRACE(backend);
    DatasetRun r = run_dataset({"--backend", backend, "--dataset-name", "sharegpt",
                                "--dataset-path", kFixtures + "sharegpt.json", "--multi-turn",
                                "--num-prompts", "12", "--seed", "3", "--sharegpt-output-len", "8",
                                "--max-active-conversations", "3", "--io-threads", "2"});
    expect_conversations(r, 12, 3);
    EXPECT_NE(
        r.outcome.out.find("Multi-turn: 12 conversations, " + std::to_string(r.records.size()) +
                           " turns; maximum active conversations: 3"),
        std::string::npos)
        << r.outcome.out;
    EXPECT_EQ(r.result["servebench"]["dataset"]["multi_turn"]["max_active_conversations"], 3);
  }
  DatasetRun capped =
      run_dataset({"--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
                   "--multi-turn", "--num-prompts", "6", "--max-turns", "1"});
  ASSERT_EQ(capped.outcome.exit_code, 0) << capped.outcome.err;
  EXPECT_EQ(capped.records.size(), 6u);  // one turn each
  for (const auto& [index, rec] : capped.records) EXPECT_EQ(rec["turn"], 0);
}

TEST(DatasetRun, CustomJsonlWithPerRowOutputTokens) {
  std::set<int> file_outputs;
  for (const auto& row : jsonl(kFixtures + "custom.jsonl")) {
    file_outputs.insert(row["output_tokens"].get<int>());
  }
  DatasetRun r = run_dataset({"--dataset-name", "custom", "--dataset-path",
                              kFixtures + "custom.jsonl", "--num-prompts", "12",
                              "--custom-output-len", "-1", "--custom-skip-chat-template"});
  expect_all_succeeded(r, 12, "custom");
  for (const auto& [index, rec] : r.records) {
    EXPECT_TRUE(file_outputs.count(rec["expected_output_tokens"].get<int>())) << rec.dump();
  }
}

TEST(DatasetRun, SonnetBuiltInVerses) {
  DatasetRun r =
      run_dataset({"--dataset-name", "sonnet", "--num-prompts", "10", "--sonnet-input-len", "200",
                   "--sonnet-output-len", "8", "--sonnet-prefix-len", "60"});
  expect_all_succeeded(r, 10, "sonnet");
  for (const auto& [index, rec] : r.records) {
    EXPECT_LE(rec["prompt_tokens"].get<int>(), 200);
    EXPECT_EQ(rec["expected_output_tokens"], 8);
  }
}

TEST(DatasetRun, PrefixRepetitionAndGeneratedSharedPrefix) {
  DatasetRun pr =
      run_dataset({"--dataset-name", "prefix_repetition", "--num-prompts", "13",
                   "--prefix-repetition-prefix-len", "64", "--prefix-repetition-suffix-len", "16",
                   "--prefix-repetition-num-prefixes", "4", "--prefix-repetition-output-len", "5"});
  expect_all_succeeded(pr, 12, "prefix_repetition", 13);  // 4 x floor(13 / 4)
  EXPECT_NE(pr.outcome.err.find("= 12 prompts"), std::string::npos) << pr.outcome.err;
  for (const auto& [index, rec] : pr.records) EXPECT_EQ(rec["prompt_tokens"], 80);

  DatasetRun gsp = run_dataset({"--dataset-name", "generated-shared-prefix", "--gsp-num-groups",
                                "3", "--gsp-prompts-per-group", "4", "--gsp-system-prompt-len",
                                "100", "--gsp-question-len", "20", "--gsp-output-len", "6"});
  expect_all_succeeded(gsp, 12, "generated-shared-prefix");
  for (const auto& [index, rec] : gsp.records) EXPECT_EQ(rec["prompt_tokens"], 121);
}

// vLLM's mapping: --output-len sets sharegpt's, custom's and prefix_repetition's output lengths
// (over their own flags); sonnet keeps its own flags.
TEST(DatasetRun, GeneralOutputLenAppliesWhereVllmAppliesIt) {
  const std::vector<std::vector<std::string>> datasets = {
      {"--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
       "--sharegpt-output-len", "9"},
      {"--dataset-name", "custom", "--dataset-path", kFixtures + "custom.jsonl",
       "--custom-output-len", "-1"},
      {"--dataset-name", "prefix_repetition", "--prefix-repetition-num-prefixes", "2",
       "--prefix-repetition-output-len", "9"}};
  for (std::vector<std::string> args : datasets) {
    SCOPED_TRACE(args[1]);
    args.insert(args.end(), {"--num-prompts", "4", "--output-len", "3"});
    DatasetRun r = run_dataset(args);
    expect_all_succeeded(r, 4, args[1]);
    for (const auto& [index, rec] : r.records) EXPECT_EQ(rec["expected_output_tokens"], 3);
  }
  DatasetRun sonnet =
      run_dataset({"--dataset-name", "sonnet", "--num-prompts", "3", "--sonnet-input-len", "200",
                   "--sonnet-output-len", "7", "--sonnet-prefix-len", "60", "--input-len", "900",
                   "--output-len", "3"});
  expect_all_succeeded(sonnet, 3, "sonnet");
  for (const auto& [index, rec] : sonnet.records) {
    EXPECT_LE(rec["prompt_tokens"].get<int>(), 200);
    EXPECT_EQ(rec["expected_output_tokens"], 7);
  }
}

TEST(DatasetRun, MooncakeTraceIsReplayedAtItsTimestampsScaled) {
  std::vector<int64_t> stamps_ms;
  std::vector<int> inputs;
  for (const auto& row : jsonl(kFixtures + "mooncake.jsonl")) {
    stamps_ms.push_back(row["timestamp"].get<int64_t>());
    inputs.push_back(row["input_length"].get<int>());
  }
  DatasetRun r = run_dataset({"--dataset-name", "mooncake", "--dataset-path",
                              kFixtures + "mooncake.jsonl", "--trace-time-scale", "0.5"});
  expect_all_succeeded(r, stamps_ms.size(), "mooncake", 1000);  // --num-prompts' default
  EXPECT_NE(r.outcome.out.find("Traffic: replaying the trace's timestamps (time scale 0.5"),
            std::string::npos)
      << r.outcome.out;
  EXPECT_NE(r.outcome.err.find("the trace has 30 usable rows"), std::string::npos);
  EXPECT_EQ(r.result["servebench"]["dataset"]["trace_time_scale"], 0.5);
  const int64_t t0 = r.records.at(0)["intended_ns"].get<int64_t>();
  for (size_t i = 0; i < stamps_ms.size(); ++i) {
    const json& rec = r.records.at(i);
    // Intended send times are the trace's offsets (ms) times 0.5, exactly.
    EXPECT_EQ(rec["intended_ns"].get<int64_t>() - t0, (stamps_ms[i] - stamps_ms[0]) * 500'000) << i;
    EXPECT_EQ(rec["prompt_tokens"], inputs[i]) << i;
    // Sent at (or after) the intended time, and not long after on an idle loopback.
    EXPECT_GE(rec["sent_ns"].get<int64_t>(), rec["intended_ns"].get<int64_t>());
  }
}

// vLLM forces ignore_eos for timed_trace (the trace's output lengths are the point); other
// datasets send it only with --ignore-eos. A simulator that stops every answer after one token
// unless told to ignore EOS tells the two apart.
TEST(DatasetRun, TimedTraceAsksTheServerToIgnoreEos) {
  const int port = free_port();
  Background sim({"sim", "--port", std::to_string(port), "--ttft-ms", "1", "--itl-ms", "0.5",
                  "--output-len-dist", "uniform:1:1"});
  ASSERT_TRUE(sim.wait_for_port(port, 10)) << sim.log();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  std::vector<int> outputs;
  for (const auto& row : jsonl(kFixtures + "mooncake.jsonl"))
    outputs.push_back(row["output_length"].get<int>());
  for (const std::string dataset : {"timed_trace", "mooncake"}) {
    SCOPED_TRACE(dataset);
    std::vector<std::string> args = {"--dataset-name",     dataset,
                                     "--dataset-path",     kFixtures + "mooncake.jsonl",
                                     "--trace-time-scale", "0.1"};
    // The fixture's times are ms: mooncake's unit; timed_trace's is seconds unless told.
    if (dataset == "timed_trace")
      args.insert(args.end(), {"--timed-trace-sec-multiplier", "0.001"});
    DatasetRun r = run_dataset(args, {"--base-url", url});
    expect_all_succeeded(r, outputs.size(), dataset, 1000);
    if (HasFatalFailure()) return;
    const bool ignores_eos = dataset == "timed_trace";
    for (size_t i = 0; i < outputs.size(); ++i) {
      EXPECT_EQ(r.records.at(i)["server_completion_tokens"], ignores_eos ? outputs[i] : 1) << i;
    }
  }
}

// vLLM's --no-self-timed: the trace's rows are sent on the --request-rate schedule (gamma gaps
// rescaled so the last is due at n/rate), not at their timestamps.
TEST(DatasetRun, NoSelfTimedSendsTheTraceAtTheRequestRate) {
  DatasetRun r =
      run_dataset({"--dataset-name", "mooncake", "--dataset-path", kFixtures + "mooncake.jsonl",
                   "--no-self-timed", "--request-rate", "300", "--burstiness", "inf"});
  expect_all_succeeded(r, 30, "mooncake", 1000);
  EXPECT_NE(r.outcome.out.find("Traffic request rate: 300.0"), std::string::npos) << r.outcome.out;
  // Burstiness inf: evenly spaced, 1/300 s apart, the 30th due at 30/300 s.
  for (size_t i = 0; i < 30; ++i) {
    const double due_s = r.records.at(i)["intended_ns"].get<int64_t>() / 1e9;
    EXPECT_NEAR(due_s, (i + 1) / 300.0, 1e-6) << i;
  }
}

TEST(DatasetRun, AzureCsvTrace) {
  DatasetRun r = run_dataset({"--dataset-name", "azure_trace", "--dataset-path",
                              kFixtures + "azure.csv", "--num-prompts", "20"});
  expect_all_succeeded(r, 20, "azure_trace");
  EXPECT_EQ(r.records.at(0)["prompt_tokens"], 289);  // ContextTokens of the first row
  EXPECT_EQ(r.records.at(0)["expected_output_tokens"], 17);
  EXPECT_EQ(
      r.records.at(1)["intended_ns"].get<int64_t>() - r.records.at(0)["intended_ns"].get<int64_t>(),
      24'427'500);
}

// One stderr line, the exit code of an input error, nothing on stdout.
void expect_one_line_error(const Outcome& o, int exit_code, const std::string& starts_with,
                           const std::string& contains) {
  EXPECT_EQ(o.exit_code, exit_code) << o.out << o.err;
  std::vector<std::string> lines;
  for (const auto& l : lines_of(o.err)) {
    if (!l.empty() && l.find("embedded simulator") == std::string::npos) lines.push_back(l);
  }
  ASSERT_EQ(lines.size(), 1u) << o.err;
  EXPECT_EQ(lines[0].rfind(starts_with, 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(contains), std::string::npos) << lines[0];
}

TEST(DatasetRun, BadDatasetFilesAreOneLineInputErrors) {
  TempDir dir;
  Outcome missing = run({"run", "--dataset-name", "sharegpt", "--dataset-path",
                         dir.path() + "/nope.json", "--disable-tqdm"});
  expect_one_line_error(missing, 3, "servebench: --dataset-path: cannot read '",
                        "No such file or directory");

  const std::string bad = dir.path() + "/bad.jsonl";
  std::ofstream(bad) << "{\"prompt\": \"fine here\"}\n{\"prompt\": \"broken\" \n";
  Outcome malformed =
      run({"run", "--dataset-name", "custom", "--dataset-path", bad, "--disable-tqdm"});
  expect_one_line_error(malformed, 3, "servebench: " + bad + ":2 (byte ", "): not valid JSON");

  const std::string empty = dir.path() + "/empty.json";
  std::ofstream(empty) << "[]";
  Outcome no_rows =
      run({"run", "--dataset-name", "sharegpt", "--dataset-path", empty, "--disable-tqdm"});
  expect_one_line_error(no_rows, 3, "servebench: " + empty + ": no usable rows: 0 read", "");
}

TEST(DatasetRun, DatasetFlagMistakesAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--dataset-name", "burstgpt"}, "--dataset-name"},
      {{"--dataset-name", "sharegpt"}, "--dataset-path"},
      {{"--dataset-name", "prefix_repetition", "--dataset-path", "x"}, "--dataset-path"},
      {{"--trace-time-scale", "2"}, "--trace-time-scale"},
      {{"--dataset-name", "mooncake", "--dataset-path", "x", "--request-rate", "5"},
       "--request-rate"},
      {{"--dataset-name", "mooncake", "--dataset-path", "x", "--trace-time-scale", "0"},
       "--trace-time-scale"},
      {{"--dataset-name", "mooncake", "--dataset-path", "x", "--no-self-timed",
        "--trace-time-scale", "2"},
       "--trace-time-scale"},
      {{"--no-self-timed"}, "--no-self-timed"},
      {{"--self-timed"}, "--self-timed"},
      {{"--dataset-name", "timed_trace", "--dataset-path", "x", "--self-timed", "--no-self-timed"},
       "--no-self-timed"},
      {{"--custom-output-len", "0"}, "--custom-output-len"},
      {{"--sharegpt-output-len", "x"}, "--sharegpt-output-len"},
      {{"--dataset-name", "generated-shared-prefix", "--num-prompts", "5"}, "--num-prompts"},
      {{"--gsp-range-ratio", "0"}, "--gsp-range-ratio"},
      {{"--multi-turn"}, "--multi-turn"},
      {{"--dataset-name", "sharegpt", "--dataset-path", "x", "--max-turns", "2"}, "--max-turns"},
      {{"--dataset-name", "sharegpt", "--dataset-path", "x", "--multi-turn",
        "--max-active-conversations", "0"},
       "--max-active-conversations"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args, 20);
    expect_one_line_error(o, 2, "servebench: " + flag, "");
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
}  // namespace servebench::itest
