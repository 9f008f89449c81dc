// `servebench run` end to end: the real binary against the embedded simulator and against a
// `servebench sim` it starts, with small counts so each test takes a few seconds.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

// A small fixed-timing run: 50 prompts of 32 tokens, 16 output tokens, TTFT 20 ms, ITL 2 ms.
std::vector<std::string> small_run(const std::string& dir) {
  return {"run",
          "--num-prompts",
          "50",
          "--random-input-len",
          "32",
          "--random-output-len",
          "16",
          "--sim-ttft-ms",
          "20",
          "--sim-itl-ms",
          "2",
          "--result-dir",
          dir,
          "--save-result",
          "--disable-tqdm",
          "--percentile-metrics",
          "ttft,tpot,itl,e2el",
          "--metric-percentiles",
          "50,99"};
}

std::vector<json> read_jsonl(const std::string& path) {
  std::vector<json> out;
  for (const auto& line : lines_of(read_file(path))) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

// The one result JSON and the one records file in `dir`.
std::pair<std::string, std::string> outputs_in(const TempDir& dir) {
  std::string result, records;
  for (const auto& name : dir.files()) {
    if (name.ends_with(".records.jsonl")) {
      records = dir.path() + "/" + name;
    } else if (name.ends_with(".json")) {
      result = dir.path() + "/" + name;
    }
  }
  return {result, records};
}

std::vector<std::string> sim_args(int port, const std::string& model,
                                  const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {
      "sim",      "--port", std::to_string(port), "--served-model-name", model, "--ttft-ms", "5",
      "--itl-ms", "1"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(RunEmbedded, FixedModeGivesVllmBlockResultJsonAndRecords) {
  TempDir dir;
  Outcome o = run(small_run(dir.path()));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("started the embedded simulator at http://127.0.0.1:"), std::string::npos)
      << o.err;
  for (const char* line :
       {"Starting initial single prompt test run...", "Initial test run completed.",
        "Starting main benchmark run...", "Traffic request rate: inf",
        "Burstiness factor: 1.0 (Poisson process)", "Maximum request concurrency: None",
        "============ Serving Benchmark Result ============"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 50);
  EXPECT_EQ(console_value(o.out, "Failed requests:"), 0);
  EXPECT_EQ(console_value(o.out, "Total input tokens:"), 50 * 32);
  EXPECT_EQ(console_value(o.out, "Total generated tokens:"), 50 * 16);
  // Generous bounds: the machine is shared; the simulator adds its delay on top of the network.
  auto ttft = console_value(o.out, "Mean TTFT (ms):");
  ASSERT_TRUE(ttft.has_value()) << o.out;
  EXPECT_GE(*ttft, 19.0);
  EXPECT_LE(*ttft, 120.0);
  auto tpot = console_value(o.out, "Mean TPOT (ms):");
  ASSERT_TRUE(tpot.has_value());
  // Below the 2 ms ITL when the first token leaves late and the rest on time (the simulator
  // keeps each token's due time): seen at 1.66 on a machine at load 15.
  EXPECT_GE(*tpot, 1.0);
  EXPECT_LE(*tpot, 12.0);
  auto itl = console_value(o.out, "Mean ITL (ms):");
  ASSERT_TRUE(itl.has_value());
  EXPECT_GE(*itl, 1.5);
  EXPECT_LE(*itl, 12.0);
  EXPECT_TRUE(console_value(o.out, "P50 E2EL (ms):").has_value()) << o.out;

  auto [result_path, records_path] = outputs_in(dir);
  ASSERT_FALSE(result_path.empty()) << "files: " << dir.files().size();
  const std::string name = result_path.substr(dir.path().size() + 1);
  EXPECT_TRUE(
      std::regex_match(name, std::regex(R"(openai-infqps-servebench-sim-\d{8}-\d{6}\.json)")))
      << name;
  json r = json::parse(read_file(result_path));
  EXPECT_EQ(r["completed"], 50);
  EXPECT_EQ(r["failed"], 0);
  EXPECT_EQ(r["total_input_tokens"], 1600);
  EXPECT_EQ(r["total_output_tokens"], 800);
  EXPECT_EQ(r["num_prompts"], 50);
  EXPECT_EQ(r["request_rate"], "inf");
  EXPECT_EQ(r["burstiness"], 1.0);
  EXPECT_TRUE(r["max_concurrency"].is_null());
  EXPECT_EQ(r["model_id"], "servebench-sim");
  EXPECT_EQ(r["backend"], "openai");
  for (const char* key :
       {"date", "duration", "request_throughput", "output_throughput", "total_token_throughput",
        "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p50_ttft_ms", "p99_ttft_ms",
        "mean_tpot_ms", "p99_itl_ms", "mean_e2el_ms"}) {
    EXPECT_TRUE(r.contains(key)) << key;
  }
  EXPECT_FALSE(r.contains("ttfts"));  // only with --save-detailed
  EXPECT_GT(r["duration"].get<double>(), 0.0);
  // Chunk times from the kernel's receive stamps ("mixed" only while other processes switch the
  // kernel's stamping off and on), and how long the bytes waited to be read.
  const json& client = r["servebench"]["client"];
  EXPECT_EQ(client["transport"], "http1");
  EXPECT_TRUE(client["arrival_clock"] == "kernel" || client["arrival_clock"] == "mixed")
      << client.dump();
  EXPECT_GT(client["kernel_stamped_reads"].get<uint64_t>(), 0u);
  const json& delay = client["read_delay_ms"];
  EXPECT_LE(delay["p50"].get<double>(), delay["p99"].get<double>());
  EXPECT_LE(delay["p99"].get<double>(), delay["max"].get<double>());
  EXPECT_NE(o.out.find("Chunk times from:"), std::string::npos) << o.out;

  ASSERT_FALSE(records_path.empty());
  auto records = read_jsonl(records_path);
  ASSERT_EQ(records.size(), 50u);
  std::set<uint64_t> indices;
  for (const auto& rec : records) {
    indices.insert(rec["index"].get<uint64_t>());
    EXPECT_TRUE(rec["success"].get<bool>());
    EXPECT_EQ(rec["prompt_tokens"], 32);
  }
  EXPECT_EQ(indices.size(), 50u);
  EXPECT_EQ(*indices.rbegin(), 49u);
}

TEST(RunEmbedded, ChatBackendWithRateConcurrencyWarmupsAndDetailedResult) {
  TempDir dir;
  Outcome o = run({"run",
                   "--backend",
                   "openai-chat",
                   "--num-prompts",
                   "12",
                   "--random-input-len",
                   "16",
                   "--random-output-len",
                   "4",
                   "--sim-ttft-ms",
                   "5",
                   "--sim-itl-ms",
                   "1",
                   "--request-rate",
                   "40",
                   "--max-concurrency",
                   "4",
                   "--num-warmups",
                   "3",
                   "--save-result",
                   "--save-detailed",
                   "--result-dir",
                   dir.path(),
                   "--result-filename",
                   "chat.json",
                   "--metadata",
                   "team=perf",
                   "tp=1",
                   "--model",
                   "org/chat-model"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Warming up with 3 requests..."), std::string::npos);
  EXPECT_NE(o.out.find("Warmup run completed."), std::string::npos);
  EXPECT_EQ(console_value(o.out, "Warmup requests (not counted):"), 3) << o.out;
  EXPECT_NE(o.out.find("Traffic request rate: 40.0"), std::string::npos);
  EXPECT_NE(o.out.find("Maximum request concurrency: 4"), std::string::npos);
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 12);
  // The tqdm bar went to stderr and finished at 100%.
  EXPECT_NE(o.err.find("100%|"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("| 12/12 ["), std::string::npos) << o.err;

  json r = json::parse(read_file(dir.path() + "/chat.json"));
  EXPECT_EQ(r["backend"], "openai-chat");
  EXPECT_EQ(r["model_id"], "org/chat-model");
  EXPECT_EQ(r["max_concurrency"], 4);
  EXPECT_EQ(r["request_rate"], 40.0);
  EXPECT_EQ(r["team"], "perf");
  EXPECT_EQ(r["tp"], "1");
  ASSERT_TRUE(r.contains("ttfts"));
  EXPECT_EQ(r["ttfts"].size(), 12u);
  EXPECT_EQ(r["output_lens"].size(), 12u);
  EXPECT_EQ(r["servebench"]["warmup_requests_ignored"], 3);
  // Warmups are in the records file, flagged, but not in the result.
  auto records = read_jsonl(dir.path() + "/chat.records.jsonl");
  ASSERT_EQ(records.size(), 15u);
  size_t warmups = 0;
  for (const auto& rec : records) warmups += rec["warmup"].get<bool>();
  EXPECT_EQ(warmups, 3u);
}

TEST(RunEmbedded, AFailedRecordsWriteIsSaidOnceAndTheRunGoesOn) {
  TempDir dir;
  Outcome o = run({"run", "--num-prompts", "12", "--random-input-len", "16", "--random-output-len",
                   "4", "--disable-tqdm", "--records", "/dev/full", "--save-result", "--result-dir",
                   dir.path(), "--result-filename", "r.json"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string said = "servebench: --records '/dev/full': write failed (";
  ASSERT_NE(o.err.find(said), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(said, o.err.find(said) + 1), std::string::npos) << "said twice: " << o.err;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 12);
  EXPECT_EQ(read_jsonl(dir.path() + "/r.json").at(0)["completed"].get<int>(), 12);
}

TEST(RunExternal, AgainstServebenchSimWithBaseUrlAndModelDiscovery) {
  const int port = free_port();
  Background sim(sim_args(port, "org/ext-model"));
  ASSERT_TRUE(sim.wait_for_port(port, 10)) << sim.log();
  TempDir dir;
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  Outcome o =
      run({"run", "--base-url", url, "--num-prompts", "20", "--random-input-len", "24",
           "--random-output-len", "8", "--disable-tqdm", "--records", dir.path() + "/recs.jsonl"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(o.err.find("embedded simulator"), std::string::npos);
  EXPECT_NE(o.out.find("Model not specified, fetching first model from server..."),
            std::string::npos);
  EXPECT_NE(o.out.find("First model name: org/ext-model"), std::string::npos) << o.out;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 20);
  EXPECT_EQ(console_value(o.out, "Total input tokens:"), 20 * 24);
  EXPECT_EQ(console_value(o.out, "Total generated tokens:"), 20 * 8);
  EXPECT_EQ(read_jsonl(dir.path() + "/recs.jsonl").size(), 20u);

  // --host/--port reach the same server; a wrong --model shows the server's error.
  Outcome wrong = run({"run", "--host", "127.0.0.1", "--port", std::to_string(port), "--model",
                       "no-such-model", "--num-prompts", "3", "--disable-tqdm"});
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_NE(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("no-such-model"), std::string::npos) << wrong.err;
  EXPECT_LT(wrong.seconds, 15);
}

TEST(RunExternal, FaultsAreCountedAndPrinted) {
  const int port = free_port();
  Background sim(sim_args(port, "m", {"--fault", "500:0.3", "--seed", "5"}));
  ASSERT_TRUE(sim.wait_for_port(port, 10)) << sim.log();
  TempDir dir;
  Outcome o = run({"run", "--base-url", "http://127.0.0.1:" + std::to_string(port), "--model", "m",
                   "--num-prompts", "40", "--random-input-len", "8", "--random-output-len", "4",
                   "--disable-tqdm", "--ready-check-timeout-sec", "10", "--records",
                   dir.path() + "/r.jsonl"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;  // failed requests do not fail the run (vLLM)
  auto ok = console_value(o.out, "Successful requests:");
  auto failed = console_value(o.out, "Failed requests:");
  ASSERT_TRUE(ok && failed) << o.out;
  EXPECT_EQ(*ok + *failed, 40);
  EXPECT_GT(*failed, 0);
  EXPECT_GT(*ok, 0);
  EXPECT_NE(o.out.find("Failed requests during benchmark run detected (capping to 10):"),
            std::string::npos);
  EXPECT_NE(o.out.find("Error 0: "), std::string::npos);
  auto records = read_jsonl(dir.path() + "/r.jsonl");
  ASSERT_EQ(records.size(), 40u);
  size_t bad = 0;
  for (const auto& rec : records) {
    if (!rec["success"].get<bool>()) {
      ++bad;
      EXPECT_EQ(rec["http_status"], 500);
      EXPECT_FALSE(rec["error"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(static_cast<double>(bad), *failed);
}

// Every fault mode of the simulator, end to end: each run accounts for every request (sent =
// completed + failed), names the failure, and keeps what was measured before a mid-stream fault.
struct FaultCase {
  std::string rule;            // --sim-fault: half the requests, after 2 tokens
  int http_status;             // of the failed records
  std::string error_part;      // in their error text
  bool tokens_before_failure;  // failed records still carry the first tokens' times
};

void PrintTo(const FaultCase& c, std::ostream* os) {
  *os << c.rule;
}

class RunFault : public ::testing::TestWithParam<FaultCase> {};

TEST_P(RunFault, EveryRequestIsAccountedForWithItsReason) {
  const FaultCase& c = GetParam();
  TempDir dir;
  const std::string records = dir.path() + "/r.jsonl";
  Outcome o = run({"run",       "--num-prompts",
                   "30",        "--random-input-len",
                   "8",         "--random-output-len",
                   "8",         "--sim-ttft-ms",
                   "5",         "--sim-itl-ms",
                   "2",         "--sim-fault",
                   c.rule,      "--seed",
                   "3",         "--ready-check-timeout-sec",
                   "20",        "--disable-tqdm",
                   "--records", records});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  auto ok = console_value(o.out, "Successful requests:");
  auto failed = console_value(o.out, "Failed requests:");
  ASSERT_TRUE(ok.has_value()) << o.out;
  const double failed_count = failed.value_or(0);
  EXPECT_EQ(*ok + failed_count, 30);
  auto lines = read_jsonl(records);
  ASSERT_EQ(lines.size(), 30u);
  size_t bad = 0;
  for (const auto& rec : lines) {
    if (rec["success"].get<bool>()) continue;
    ++bad;
    const std::string error = rec["error"].get<std::string>();
    EXPECT_EQ(rec["http_status"].get<int>(), c.http_status) << error;
    EXPECT_NE(error.find(c.error_part), std::string::npos) << error;
    if (c.tokens_before_failure) {
      EXPECT_GE(rec["first_token_ns"].get<int64_t>(), 0) << error;
      EXPECT_GE(rec["chunk_ns"].size(), 2u) << error;
    }
  }
  EXPECT_EQ(static_cast<double>(bad), failed_count);
  EXPECT_GT(bad, 0u) << "the fault never fired: " << o.out;
  EXPECT_GT(*ok, 0);
}

INSTANTIATE_TEST_SUITE_P(
    EachKind, RunFault,
    ::testing::Values(FaultCase{"429:0.5", 429, "HTTP 429", false},
                      FaultCase{"500:0.5", 500, "HTTP 500", false},
                      FaultCase{"503:0.5", 503, "HTTP 503", false},
                      FaultCase{"reset:0.5:2", 200, "transport", true},
                      FaultCase{"malformed:0.5:2", 200, "malformed SSE event", true},
                      FaultCase{"truncate:0.5:2", 200, "without [DONE]", true},
                      FaultCase{"error-event:0.5:2", 200, "server error event", true}),
    [](const auto& info) {
      std::string name = info.param.rule.substr(0, info.param.rule.find(':'));
      std::erase(name, '-');
      return "Fault" + name;
    });

// Under `ulimit -n 80` the embedded simulator and the client share 80 descriptors: 300 requests
// at once cannot fit (they used to wait on each other for ever). The run refuses before sending,
// naming the flag that fits, and with that flag every request completes.
TEST(RunLimits, LowOpenFilesLimitIsRefusedUpFrontThenFitsTheConcurrencyItNames) {
  RunSpec spec;
  spec.args = {"run", "--num-prompts", "300", "--random-input-len", "5", "--random-output-len",
               "5",   "--sim-ttft-ms", "5",   "--sim-itl-ms",       "1", "--disable-tqdm"};
  spec.timeout_s = 60;
  spec.open_files_limit = 80;
  Outcome refused = run(spec);
  ASSERT_FALSE(refused.timed_out) << "the run hung: " << refused.err;
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("servebench: --max-concurrency: up to 300 requests may be in flight"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("pass --max-concurrency 8 or less"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("Starting main benchmark run"), std::string::npos);

  spec.args.insert(spec.args.end(), {"--max-concurrency", "8"});
  Outcome fits = run(spec);
  ASSERT_FALSE(fits.timed_out) << "the run hung: " << fits.err;
  ASSERT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  EXPECT_EQ(console_value(fits.out, "Successful requests:"), 300) << fits.out;
}

TEST(RunFaultStall, StalledStreamsSucceedAndShowTheGapInRecordsAndTrace) {
  TempDir dir;
  const std::string records = dir.path() + "/r.jsonl";
  const std::string trace = dir.path() + "/trace.jsonl";
  Outcome o = run({"run", "--num-prompts", "10", "--random-input-len", "8", "--random-output-len",
                   "6", "--sim-ttft-ms", "5", "--sim-itl-ms", "2", "--sim-fault", "stall:1:2:0.3",
                   "--disable-tqdm", "--records", records, "--sim-trace-out", trace});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 10);
  auto lines = read_jsonl(records);
  ASSERT_EQ(lines.size(), 10u);
  for (const auto& rec : lines) {
    ASSERT_TRUE(rec["success"].get<bool>()) << rec.dump();
    auto chunks = rec["chunk_ns"].get<std::vector<int64_t>>();
    int64_t widest = 0;
    for (size_t i = 1; i < chunks.size(); ++i) widest = std::max(widest, chunks[i] - chunks[i - 1]);
    EXPECT_GE(widest, 250'000'000) << "no 0.3 s stall seen between tokens";
  }
  // The embedded simulator's ground truth names every measured request (plus the ready check).
  std::set<std::string> traced;
  for (const auto& line : read_jsonl(trace)) traced.insert(line["request_id"].get<std::string>());
  EXPECT_EQ(traced.size(), 11u);
  for (const auto& rec : lines) EXPECT_EQ(traced.count(rec["request_id"].get<std::string>()), 1u);
}

// OPENAI_API_KEY and credential --header values are redacted wherever the server echoes them,
// even in no known form: here the simulator's wrong-model error quotes the model name, which
// the test makes equal to the key.
TEST(RunExternal, SecretsTheServerEchoesAreRedacted) {
  const int port = free_port();
  Background sim(sim_args(port, "org/ext-model"));
  ASSERT_TRUE(sim.wait_for_port(port, 10)) << sim.log();
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  setenv("OPENAI_API_KEY", "team-key-2718", 1);
  Outcome by_env = run({"run", "--base-url", url, "--model", "team-key-2718", "--tokenizer",
                        "builtin", "--num-prompts", "2", "--disable-tqdm"});
  unsetenv("OPENAI_API_KEY");
  Outcome by_header =
      run({"run", "--base-url", url, "--model", "gateway-pass-31", "--tokenizer", "builtin",
           "--header", "X-Gateway-Token=gateway-pass-31", "--num-prompts", "2", "--disable-tqdm"});
  for (const auto& [o, secret] :
       {std::pair{&by_env, "team-key-2718"}, std::pair{&by_header, "gateway-pass-31"}}) {
    EXPECT_EQ(o->exit_code, 4) << o->err;
    EXPECT_NE(o->err.find("<redacted>"), std::string::npos) << o->err;
    EXPECT_EQ(o->err.find(secret), std::string::npos) << o->err;
    EXPECT_EQ(o->out.find(secret), std::string::npos) << o->out;
  }
}

TEST(RunExternal, UnreachableServerFailsFastNamingTheUrl) {
  const int port = free_port();  // nobody listens
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  Outcome o = run({"run", "--base-url", url, "--model", "m", "--num-prompts", "5"}, 30);
  EXPECT_EQ(o.exit_code, 4) << o.out << o.err;
  EXPECT_NE(o.err.find(url), std::string::npos) << o.err;
  EXPECT_LT(o.seconds, 10);
  EXPECT_EQ(o.out.find("Serving Benchmark Result"), std::string::npos);

  Outcome no_model = run({"run", "--port", std::to_string(port), "--num-prompts", "5"}, 30);
  EXPECT_EQ(no_model.exit_code, 4);
  EXPECT_NE(no_model.err.find(url + "/v1/models"), std::string::npos) << no_model.err;
  EXPECT_LT(no_model.seconds, 15);
}

TEST(RunCli, BadInputGivesOneLineNamingTheFlagAndExit2) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--num-prompts=-5"}, "--num-prompts"},
      {{"--num-prompts", "abc"}, "--num-prompts"},
      {{"--num-prompts"}, "--num-prompts"},
      {{"--model", "--num-prompts", "3"}, "--model"},
      {{"--request-rate", "0"}, "--request-rate"},
      {{"--burstiness", "-1"}, "--burstiness"},
      {{"--max-concurrency", "0"}, "--max-concurrency"},
      {{"--max-concurrency", "1,,4"}, "--max-concurrency"},
      {{"--request-rate", "1,x"}, "--request-rate"},
      {{"--request-rate", "1,2", "--result-filename", "r.json"}, "--result-filename"},
      {{"--http-engine", "http1", "--base-url", "https://127.0.0.1:1"}, "--http-engine"},
      {{"--http-engine", "h2"}, "--http-engine"},
      {{"--arrival-clock", "tsc"}, "--arrival-clock"},
      {{"--goodput", "ttft=5"}, "--goodput"},
      {{"--goodput", "latency:5"}, "--goodput"},
      {{"--metadata", "novalue"}, "--metadata"},
      {{"--header", "novalue"}, "--header"},
      {{"--extra-body", "{bad"}, "--extra-body"},
      {{"--extra-body", "[1]"}, "--extra-body"},
      {{"--no-such-flag"}, "--no-such-flag"},
      {{"--profile"}, "--profile"},
      {{"--backend", "tgi"}, "--backend"},
      {{"--dataset-name", "burstgpt"}, "--dataset-name"},
      {{"--dataset-path", "x.json"}, "--dataset-path"},
      {{"--tokenizer", "gpt2"}, "--tokenizer"},
      {{"--random-range-ratio", "1.5"}, "--random-range-ratio"},
      {{"--random-input-len", "0"}, "--random-input-len"},
      {{"--percentile-metrics", "ttft,foo"}, "--percentile-metrics"},
      {{"--metric-percentiles", "101"}, "--metric-percentiles"},
      {{"--port", "70000"}, "--port"},
      {{"--base-url", "ftp://x"}, "--base-url"},
      {{"--endpoint", "/v1/chat/completions"}, "--endpoint"},
      {{"--base-url", "http://127.0.0.1:1", "--sim-ttft-ms", "5"}, "--sim-ttft-ms"},
      {{"--sim-mode", "warp"}, "--sim-mode"},
      {{"--header", "Bad Name=1"}, "--header"},
      {{"--backend", "openai-chat", "--logprobs", "2"}, "--logprobs"},
      {{"--logprobs", "-1"}, "--logprobs"},
      {{"--probe-request-rate", "-1"}, "--probe-request-rate"},
      {{"--request-timeout-sec", "0"}, "--request-timeout-sec"},
      {{"--request-id-prefix", "a\r\nX-Injected: 1"}, "--request-id-prefix"},
      // The same file as input and output: the input would be destroyed.
      {{"--dataset-name", "sharegpt", "--dataset-path", "d.json", "--records", "./d.json"},
       "--records"},
      {{"--dataset-name", "sharegpt", "--dataset-path", "d.json", "--sim-trace-out", "d.json"},
       "--sim-trace-out"},
      {{"--records", "r.json", "--save-result", "--result-filename", "r.json"},
       "--result-filename"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args, 20);
    EXPECT_EQ(o.exit_code, 2) << extra[0] << ": " << o.err;
    std::vector<std::string> lines;
    for (const auto& l : lines_of(o.err)) {
      if (!l.empty()) lines.push_back(l);
    }
    ASSERT_EQ(lines.size(), 1u) << extra[0] << ": " << o.err;
    EXPECT_EQ(lines[0].rfind("servebench: " + flag, 0), 0u) << lines[0];
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

TEST(RunSweep, ConcurrencyListRunsOneBenchmarkEachThenTheTable) {
  TempDir dir;
  std::vector<std::string> args = small_run(dir.path());
  args[2] = "8";  // --num-prompts
  args.insert(args.end(), {"--max-concurrency", "1,4"});
  Outcome o = run(args);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  // One vLLM block per value, in order, then seed 004's table with one row each.
  size_t first = o.out.find("Maximum request concurrency: 1\n");
  size_t second = o.out.find("Maximum request concurrency: 4\n");
  ASSERT_NE(first, std::string::npos) << o.out;
  ASSERT_NE(second, std::string::npos) << o.out;
  EXPECT_LT(first, second);
  size_t blocks = 0;
  for (size_t at = 0; (at = o.out.find("Serving Benchmark Result", at)) != std::string::npos; ++at)
    ++blocks;
  EXPECT_EQ(blocks, 2u);
  size_t table = o.out.find("Sweep: 2 runs");
  ASSERT_NE(table, std::string::npos) << o.out;
  EXPECT_GT(table, second);
  EXPECT_TRUE(std::regex_search(o.out.substr(table), std::regex(R"(\n\| 1 \| [0-9.]+ \|)")))
      << o.out.substr(table);
  EXPECT_TRUE(std::regex_search(o.out.substr(table), std::regex(R"(\n\| 4 \| [0-9.]+ \|)")))
      << o.out.substr(table);
  // A result per run, named by vLLM's rule, each with its own concurrency and every request.
  std::set<int> concurrencies;
  for (const auto& name : dir.files()) {
    if (!name.ends_with(".json")) continue;
    json result = json::parse(read_file(dir.path() + "/" + name));
    EXPECT_EQ(result["completed"], 8) << name;  // every request of the run
    concurrencies.insert(result["max_concurrency"].get<int>());
    EXPECT_NE(name.find("-concurrency" + std::to_string(result["max_concurrency"].get<int>())),
              std::string::npos)
        << name;
  }
  EXPECT_EQ(concurrencies, (std::set<int>{1, 4}));
}

TEST(RunCli, AcceptsUnderscoresAndEqualsLikeVllm) {
  Outcome o = run({"run", "--num_prompts=4", "--random_input_len", "8", "--random-output-len=2",
                   "--sim_ttft_ms=1", "--sim-itl-ms", "1", "--disable_tqdm", "--temperature=0"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 4);
  EXPECT_EQ(console_value(o.out, "Total input tokens:"), 32);
  EXPECT_EQ(o.out.find("WARNING: no --temperature"), std::string::npos);
}

// Values argparse takes that servebench used to refuse: a flag given twice (the last wins), an
// empty --request-id-prefix (the ids are the bare indexes). (A negative --num-warmups, which
// vLLM runs as none, is refused: endpoint_flags_test.cpp.)
// --logprobs reaches the server: the simulator refuses more than vLLM's default maximum (20)
// with vLLM's message, which each failed request shows; 20 runs.
TEST(RunCli, LogprobsReachTheServer) {
  Outcome over = run({"run", "--num-prompts", "2", "--logprobs", "21", "--disable-tqdm"}, 20);
  EXPECT_EQ(over.exit_code, 0) << over.err;
  EXPECT_EQ(console_value(over.out, "Failed requests:"), 2);
  EXPECT_NE(over.out.find("Error 0: HTTP 400: Requested sample logprobs of 21, which is greater "
                          "than max allowed: 20"),
            std::string::npos)
      << over.out;
  Outcome ok = run({"run", "--num-prompts", "2", "--logprobs", "20", "--sim-ttft-ms", "1",
                    "--sim-itl-ms", "1", "--disable-tqdm"},
                   20);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(console_value(ok.out, "Successful requests:"), 2);
}

// --probe-request-rate: one-token probes beside the main run, past its --max-concurrency of 1,
// reported apart; against a 20 ms TTFT each probe takes at least that, and fails none.
TEST(RunCli, ProbesRunBesideTheMainRunAndAreReportedApart) {
  TempDir dir;
  Outcome o = run({"run",
                   "--num-prompts",
                   "20",
                   "--random-input-len",
                   "8",
                   "--random-output-len",
                   "4",
                   "--sim-ttft-ms",
                   "20",
                   "--sim-itl-ms",
                   "5",
                   "--max-concurrency",
                   "1",
                   "--probe-request-rate",
                   "50",
                   "--disable-tqdm",
                   "--save-result",
                   "--result-dir",
                   dir.path(),
                   "--result-filename",
                   "r.json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("Probe request rate: 50.0 req/s"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("------------------Probe Requests------------------"), std::string::npos);
  const json r = json::parse(read_file(dir.path() + "/r.json"));
  // 20 requests one at a time take >= 20 x 35 ms; a probe cycle is >= 20 ms + 20 ms.
  EXPECT_GE(r["probe_completed"].get<int>(), 5) << r.dump();
  EXPECT_EQ(r["probe_failed"], 0);
  EXPECT_GE(r["probe_median_e2el_ms"].get<double>(), 20.0);
  EXPECT_GE(r["probe_max_e2el_ms"].get<double>(), r["probe_p99_e2el_ms"].get<double>());
  // The main run's accounting is untouched by the probes.
  EXPECT_EQ(r["completed"], 20);
  EXPECT_EQ(read_jsonl(dir.path() + "/r.records.jsonl").size(), 20u);
}

// --request-timeout-sec: a stream the server stalls for 30 s fails after 0.5 s with the reason,
// instead of holding the run (vLLM's limit is 6 h); the others succeed.
TEST(RunCli, RequestTimeoutFailsStalledStreamsWithTheReason) {
  Outcome o =
      run({"run", "--num-prompts", "20", "--random-output-len", "8", "--sim-ttft-ms", "1",
           "--sim-itl-ms", "1", "--sim-fault", "stall:0.5:2:30", "--ready-check-timeout-sec", "10",
           "--request-timeout-sec", "0.5", "--disable-tqdm"},
          25);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const double failed = console_value(o.out, "Failed requests:").value_or(-1);
  EXPECT_GT(failed, 0) << o.out;
  EXPECT_EQ(console_value(o.out, "Successful requests:").value_or(-1) + failed, 20);
  EXPECT_NE(o.out.find("no complete response within the request timeout of 0.5 s"),
            std::string::npos)
      << o.out;
  EXPECT_LT(o.seconds, 20);
}

// Output paths that cannot be written fail before the benchmark, naming the flag the user gave.
TEST(RunCli, UnwritableOutputsFailBeforeTheRun) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--save-result", "--result-filename", dir.path()},
       "--result-filename: '" + dir.path() + "' is a directory"},
      {{"--save-result", "--result-dir", dir.path() + "/missing/deeper", "--result-filename",
        "/proc/r.json"},
       "--result-filename: cannot write '/proc/r.json'"},
      {{"--sim-trace-out", "/proc/t.jsonl"}, "--sim-trace-out /proc/t.jsonl: cannot open"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"run", "--num-prompts", "2", "--disable-tqdm"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome o = run(args, 20);
    EXPECT_EQ(o.exit_code, 3) << o.err;
    EXPECT_NE(o.err.find("servebench: " + message), std::string::npos) << o.err;
    EXPECT_EQ(o.out.find("Starting main benchmark run"), std::string::npos) << o.out;
  }
}

TEST(RunCli, TakesWhatVllmsArgparseTakes) {
  TempDir dir;
  Outcome o = run({"run",
                   "--num-prompts",
                   "2",
                   "--num_prompts=3",
                   "--random-input-len",
                   "8",
                   "--random-output-len",
                   "2",
                   "--sim-ttft-ms",
                   "1",
                   "--sim-itl-ms",
                   "1",
                   "--disable-tqdm",
                   "--request-id-prefix",
                   "",
                   "--save-result",
                   "--result-dir",
                   dir.path(),
                   "--result-filename",
                   "r.json"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 3);
  EXPECT_EQ(o.out.find("Warming up"), std::string::npos) << o.out;
  EXPECT_EQ(json::parse(read_file(dir.path() + "/r.json"))["num_prompts"], 3);
  std::set<std::string> ids;
  for (const auto& rec : read_jsonl(dir.path() + "/r.records.jsonl"))
    ids.insert(rec["request_id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{"0", "1", "2"}));
}

}  // namespace
}  // namespace servebench::itest
