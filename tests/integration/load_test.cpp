// `servebench run` with GuideLLM's load shapes, end to end against the embedded simulator:
// --duration, warmup/cooldown, stop rules and --profile (sweep included). Each test takes a few
// seconds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

std::vector<json> read_jsonl(const std::string& path) {
  std::vector<json> out;
  for (const auto& line : lines_of(read_file(path))) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

// Result JSONs (by file name) and the records file of each in `dir`.
std::vector<std::pair<json, std::string>> results_in(const TempDir& dir) {
  std::vector<std::pair<json, std::string>> out;
  for (const auto& name : dir.files()) {
    if (!name.ends_with(".json")) continue;
    const std::string path = dir.path() + "/" + name;
    out.emplace_back(json::parse(read_file(path)),
                     path.substr(0, path.size() - 5) + ".records.jsonl");
  }
  return out;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Short prompts and fixed timing; the test adds the traffic.
std::vector<std::string> base_run(const std::string& dir, const std::string& output_len = "16",
                                  const std::string& itl_ms = "2") {
  return {"run",           "--random-input-len", "16", "--random-output-len",
          output_len,      "--sim-ttft-ms",      "20", "--sim-itl-ms",
          itl_ms,          "--result-dir",       dir,  "--save-result",
          "--disable-tqdm"};
}

TEST(RunDuration, RateRunStopsAtTheDurationCancellingWhatIsInFlight) {
  TempDir dir;
  // 20 req/s for 2 s; each request streams 64 tokens 20 ms apart (~1.3 s), so the last ones
  // are still running at 2 s and are cancelled, as GuideLLM does at max_duration.
  Outcome o =
      run(with(base_run(dir.path(), "64", "20"), {"--request-rate", "20", "--duration", "2"}), 30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_LT(o.seconds, 10);
  EXPECT_NE(o.out.find("Duration: 2.0 s"), std::string::npos) << o.out;
  auto results = results_in(dir);
  ASSERT_EQ(results.size(), 1u);
  const auto& [result, records_path] = results.front();
  const json& load = result["servebench"]["load"];
  EXPECT_EQ(load["duration_s"], 2.0);
  EXPECT_EQ(load["duration_ended"], true);
  EXPECT_GT(result["servebench"]["failures_by_reason"].value("cancelled", 0), 0) << result.dump();
  // Every request due before the bound was sent and has exactly one record.
  auto records = read_jsonl(records_path);
  EXPECT_GE(records.size(), 30u);
  EXPECT_LE(records.size(), 40u);
  std::set<uint64_t> indices;
  size_t cancelled = 0;
  for (const auto& r : records) {
    indices.insert(r["index"].get<uint64_t>());
    EXPECT_LT(r["intended_ns"].get<int64_t>(), 2'000'000'000);
    EXPECT_GE(r["sent_ns"].get<int64_t>(), 0);
    if (r["error"].get<std::string>().starts_with("cancelled")) {
      ++cancelled;
      EXPECT_GE(r["done_ns"].get<int64_t>(), 2'000'000'000);
    }
  }
  EXPECT_EQ(indices.size(), records.size());
  EXPECT_GT(cancelled, 0u);
  EXPECT_EQ(result["completed"].get<size_t>() + result["failed"].get<size_t>(), records.size());
}

// A --duration run of `asked` requests: each one a record or counted as not sent, in the result
// and on the console; sent = completed + failed. Returns how many were recorded and not sent.
std::pair<size_t, size_t> run_accounting_for(const std::vector<std::string>& traffic,
                                             size_t asked) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()), traffic), 30);
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  auto results = results_in(dir);
  if (results.size() != 1u) {
    ADD_FAILURE() << results.size() << " results";
    return {0, 0};
  }
  const auto& [result, records_path] = results.front();
  const size_t not_sent = result["servebench"]["client"]["not_sent"].get<size_t>();
  const size_t recorded = read_jsonl(records_path).size();
  EXPECT_EQ(recorded + not_sent, asked);  // every request asked for: a record or counted unsent
  EXPECT_EQ(result["completed"].get<size_t>() + result["failed"].get<size_t>(), recorded);
  EXPECT_EQ(result["servebench"]["load"]["max_requests"], asked);
  EXPECT_EQ(console_value(o.out, "Requests not sent (planned):"), static_cast<double>(not_sent))
      << o.out;
  return {recorded, not_sent};
}

TEST(RunDuration, ConcurrencyRunSendsUntilTheEndAndCountsTheRestAsNotSent) {
  const auto [recorded, not_sent] = run_accounting_for(
      {"--max-concurrency", "2", "--duration", "1", "--num-prompts", "500"}, 500);
  EXPECT_GT(not_sent, 0u);
  EXPECT_GT(recorded, 10u);  // ~50 ms per request, two at a time, for a second
}

// --num-prompts 200 at 50 req/s within 1 s: about 50 are due before the end; the other ~150
// were asked for and never sent, and say so (they used to be 0), in the result and the console.
TEST(RunDuration, RateRunCountsTheRequestsDueAfterTheEndAsNotSent) {
  const auto [recorded, not_sent] =
      run_accounting_for({"--request-rate", "50", "--duration", "1", "--num-prompts", "200"}, 200);
  EXPECT_GT(recorded, 10u);
  EXPECT_GT(not_sent, 100u);
}

TEST(RunWindows, WarmupAndCooldownAreSentRecordedMarkedButNotMeasured) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()), {"--num-prompts", "20", "--max-concurrency", "4",
                                              "--warmup-number", "3", "--cooldown-number", "2"}));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Excluded from the metrics: 3 warmup requests (the first 3 to complete), 2 "
                       "cooldown requests (the last 2 to complete)"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 15);
  auto results = results_in(dir);
  ASSERT_EQ(results.size(), 1u);
  const auto& [result, records_path] = results.front();
  EXPECT_EQ(result["completed"], 15);
  const json& excluded = result["servebench"]["load"]["excluded"];
  EXPECT_EQ(excluded["warmup"]["requests"], 3);
  EXPECT_EQ(excluded["cooldown"]["requests"], 2);
  auto records = read_jsonl(records_path);
  ASSERT_EQ(records.size(), 20u);
  std::map<std::string, int> marks;
  for (const auto& r : records) ++marks[r.value("excluded", "")];
  EXPECT_EQ(marks, (std::map<std::string, int>{{"", 15}, {"cooldown", 2}, {"warmup", 3}}));
}

TEST(RunWindows, WindowsThatLeaveNothingSayThatRatherThanEveryRequestFailed) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()), {"--num-prompts", "3", "--warmup-number", "3"}));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.err.find("servebench: warning: the warmup/cooldown windows left no request to "
                       "measure; narrow them or send more requests"),
            std::string::npos)
      << o.err;
  EXPECT_EQ(o.err.find("every request failed"), std::string::npos) << o.err;
  EXPECT_EQ(console_value(o.out, "Failed requests:"), 0);
}

TEST(RunStopRule, MaxErrorsTripsOnSimulatorFaultsAndSavesWhatCompleted) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()),
                       {"--num-prompts", "300", "--request-rate", "50", "--sim-fault", "500:0.5",
                        "--seed", "3", "--ready-check-timeout-sec", "20", "--max-errors", "3"}),
                  30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Stopped by --max-errors 3: 3 requests errored"), std::string::npos)
      << o.out;
  EXPECT_LT(o.seconds, 10);  // 300 requests at 50/s would take 6 s; the rule stops it early
  auto results = results_in(dir);
  ASSERT_EQ(results.size(), 1u);
  const auto& [result, records_path] = results.front();
  const json& load = result["servebench"]["load"];
  EXPECT_EQ(load["stopped_by"], "max_errors");
  EXPECT_GE(load["errors"].get<int>(), 3);
  EXPECT_EQ(result["servebench"]["client"]["interrupted"], false);
  const size_t recorded = read_jsonl(records_path).size();
  EXPECT_LT(recorded, 300u);
  EXPECT_EQ(recorded + result["servebench"]["client"]["not_sent"].get<size_t>(), 300u);
  EXPECT_EQ(result["completed"].get<size_t>() + result["failed"].get<size_t>(), recorded);
}

TEST(RunStopRule, MaxErrorRateTripsOnceThirtyRequestsAreInTheWindow) {
  TempDir dir;
  Outcome o =
      run(with(base_run(dir.path()),
               {"--num-prompts", "400", "--request-rate", "100", "--sim-fault", "503:0.8", "--seed",
                "4", "--ready-check-timeout-sec", "20", "--max-error-rate", "0.5"}),
          30);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Stopped by --max-error-rate 0.5: "), std::string::npos) << o.out;
  auto results = results_in(dir);
  ASSERT_EQ(results.size(), 1u);
  const auto& [result, records_path] = results.front();
  EXPECT_EQ(result["servebench"]["load"]["stopped_by"], "max_error_rate");
  EXPECT_GE(result["servebench"]["load"]["processed"].get<int>(), 30);  // a full window first
  const size_t recorded = read_jsonl(records_path).size();
  EXPECT_GE(recorded, 30u);
  EXPECT_LT(recorded, 400u);
  EXPECT_EQ(result["servebench"]["failures_by_reason"].value("http_503", 0) +
                result["completed"].get<int>(),
            static_cast<int>(recorded));
}

TEST(RunProfile, SweepRunsSynchronousThroughputThenConstantRatesAndReportsThemAsGuidellm) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()), {"--profile", "sweep", "--rate", "4", "--duration",
                                              "1", "--num-prompts", "40"}),
                  40);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Sweep: 4 runs"), std::string::npos) << o.out;
  auto results = results_in(dir);
  ASSERT_EQ(results.size(), 4u);
  std::map<int, json> by_sequence;
  for (const auto& [result, records] : results)
    by_sequence[result["servebench"]["load"]["sequence"].get<int>()] = result;
  ASSERT_EQ(by_sequence.size(), 4u);
  EXPECT_EQ(by_sequence[0]["servebench"]["load"]["benchmark"], "synchronous");
  EXPECT_EQ(by_sequence[0]["max_concurrency"], 1);
  EXPECT_EQ(by_sequence[1]["servebench"]["load"]["benchmark"], "throughput");
  // np.linspace(sync, throughput, 3)[1:]: the midpoint, then the throughput rate itself.
  const double sync = by_sequence[0]["request_throughput"].get<double>();
  const double thr = by_sequence[1]["request_throughput"].get<double>();
  EXPECT_NEAR(by_sequence[2]["request_rate"].get<double>(), (sync + thr) / 2, 1e-6 * thr);
  EXPECT_NEAR(by_sequence[3]["request_rate"].get<double>(), thr, 1e-6 * thr);
  EXPECT_EQ(by_sequence[3]["servebench"]["load"]["strategy"], "constant");

  Outcome report = run({"report", dir.path(), "--format", "guidellm"});
  ASSERT_EQ(report.exit_code, 0) << report.out << report.err;
  // GuideLLM's order and names: synchronous, throughput, constant@X, constant@Y.
  const std::regex rows(
      R"(\n +synchronous\|[^\n]*\n +throughput\|[^\n]*\n *constant@[0-9.]+\|[^\n]*\n *constant@[0-9.]+\|)");
  EXPECT_TRUE(std::regex_search(report.out, rows)) << report.out;
}

TEST(RunProfile, ProfileWithVllmRateIsRefusedInOneLine) {
  Outcome o = run({"run", "--profile", "constant", "--rate", "2", "--request-rate", "4"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(lines_of(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.err.find("--request-rate"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace servebench::itest
