// `servebench run` with vLLM's ramp-up (--ramp-up-strategy, --ramp-up-start-rps,
// --ramp-up-end-rps) end to end against the embedded simulator: the console lines, the result
// JSON's ramp-up keys and rps_change_events, vLLM's file name, the send times, and every flag
// mistake as a one-line usage error.
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness.h"

namespace servebench::itest {
namespace {

using nlohmann::json;

const std::string kFixtures = std::string(SERVEBENCH_SOURCE_DIR) + "/tests/fixtures/datasets/";

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Short prompts and outputs, fast fixed timing, results in `dir`; the test adds the traffic.
std::vector<std::string> base_run(const std::string& dir) {
  return {"run",
          "--random-input-len",
          "16",
          "--random-output-len",
          "4",
          "--sim-ttft-ms",
          "2",
          "--sim-itl-ms",
          "0.5",
          "--result-dir",
          dir,
          "--save-result",
          "--disable-tqdm"};
}

// The only result JSON in `dir`: its file name and contents.
std::pair<std::string, json> result_in(const TempDir& dir) {
  std::string name;
  for (const std::string& file : dir.files()) {
    if (file.ends_with(".json")) {
      EXPECT_TRUE(name.empty()) << "a second result: " << file;
      name = file;
    }
  }
  if (name.empty()) return {"", json()};
  return {name, json::parse(read_file(dir.path() + "/" + name))};
}

std::map<uint64_t, json> records_by_index(const std::string& path) {
  std::map<uint64_t, json> out;
  for (const std::string& line : lines_of(read_file(path))) {
    if (line.empty()) continue;
    json r = json::parse(line);
    out[r["index"].get<uint64_t>()] = r;
  }
  return out;
}

// Seconds since the epoch of local time fields read as UTC: differences between two local times
// come out right (both are read the same way).
int64_t local_fields_seconds(int year, int month, int day, int hour, int minute, int second) {
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = second;
  return static_cast<int64_t>(timegm(&t));
}

// An rps_change_events timestamp ("YYYY-MM-DDTHH:MM:SS[.ffffff]", Python's isoformat()) in
// microseconds; -1 when it is not one.
int64_t iso_us(const std::string& text) {
  std::smatch m;
  static const std::regex kIso(R"((\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{6}))?)");
  if (!std::regex_match(text, m, kIso)) return -1;
  auto n = [&](int i) { return std::stoi(m[i].str()); };
  const int64_t s = local_fields_seconds(n(1), n(2), n(3), n(4), n(5), n(6));
  return s * 1'000'000 + (m[7].matched ? std::stoll(m[7].str()) : 0);
}

// The result's "date" ("%Y%m%d-%H%M%S", local) in seconds, read as iso_us reads its times.
int64_t date_seconds(const std::string& text) {
  std::smatch m;
  static const std::regex kDate(R"((\d{4})(\d\d)(\d\d)-(\d\d)(\d\d)(\d\d))");
  if (!std::regex_match(text, m, kDate)) return -1;
  auto n = [&](int i) { return std::stoi(m[i].str()); };
  return local_fields_seconds(n(1), n(2), n(3), n(4), n(5), n(6));
}

TEST(RunRampUp, LinearRunSavesVllmsKeysEventsAndFileName) {
  TempDir dir;
  Outcome o =
      run(with(base_run(dir.path()), {"--num-prompts", "40", "--ramp-up-strategy", "linear",
                                      "--ramp-up-start-rps", "20", "--ramp-up-end-rps", "200"}));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  for (const char* line :
       {"Traffic ramp-up strategy: linear.\n",
        "Will increase RPS from 20 to 200 RPS over the duration of the benchmark.\n",
        "Burstiness factor: 1.0 (Poisson process)\n"}) {
    EXPECT_NE(o.out.find(line), std::string::npos) << line << "\n" << o.out;
  }
  EXPECT_EQ(o.out.find("Traffic request rate:"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("Request rate configured (RPS):"), std::string::npos) << o.out;
  EXPECT_EQ(console_value(o.out, "Successful requests:"), 40);

  const auto [name, r] = result_in(dir);
  EXPECT_TRUE(std::regex_match(
      name, std::regex(R"(openai-ramp-up-linear-20qps-200qps-servebench-sim-\d{8}-\d{6}\.json)")))
      << name;
  EXPECT_EQ(r["request_rate"], "inf");
  EXPECT_EQ(r["burstiness"], 1.0);
  EXPECT_TRUE(r["max_concurrency"].is_null());
  EXPECT_EQ(r["ramp_up_strategy"], "linear");
  EXPECT_TRUE(r["ramp_up_start_rps"].is_number_integer());
  EXPECT_EQ(r["ramp_up_start_rps"], 20);
  EXPECT_EQ(r["ramp_up_end_rps"], 200);
  EXPECT_EQ(r["completed"], 40);
  EXPECT_EQ(r["servebench"]["ramp_up"]["requests"], 40);

  // One event per integer rate from the start to the end, at non-decreasing times.
  const json& events = r["rps_change_events"];
  ASSERT_TRUE(events.is_array());
  ASSERT_EQ(events.size(), 181u) << events.dump();
  int64_t previous_us = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i]["rps"], 20 + static_cast<int>(i)) << i;
    const int64_t us = iso_us(events[i]["timestamp"].get<std::string>());
    ASSERT_GE(us, 0) << events[i].dump();
    EXPECT_GE(us, previous_us) << i;
    previous_us = us;
  }
  // The first event is at t0, just after the "date" the run stamped as it started; the last at
  // a send within the run.
  const int64_t first_us = iso_us(events.front()["timestamp"].get<std::string>());
  const int64_t start_s = date_seconds(r["date"].get<std::string>());
  EXPECT_GE(first_us, start_s * 1'000'000);
  EXPECT_LT(first_us, (start_s + 30) * 1'000'000);
  EXPECT_LE(previous_us - first_us, std::llround(r["duration"].get<double>() * 1e6) + 1);
}

TEST(RunRampUp, ExponentialWithConcurrencyAndConstantGapsSendsAtOneOverEachRate) {
  TempDir dir;
  Outcome o =
      run(with(base_run(dir.path()),
               {"--num-prompts", "30", "--ramp-up-strategy", "exponential", "--ramp-up-start-rps",
                "10", "--ramp-up-end-rps", "80", "--burstiness", "inf", "--max-concurrency", "4"}));
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("Traffic ramp-up strategy: exponential.\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("Burstiness factor: inf (Gamma distribution)\n"), std::string::npos);
  EXPECT_NE(o.out.find("Maximum request concurrency: 4\n"), std::string::npos);
  const auto [name, r] = result_in(dir);
  EXPECT_TRUE(std::regex_match(
      name, std::regex(R"(openai-ramp-up-exponential-10qps-80qps-concurrency4-servebench-sim-)"
                       R"(\d{8}-\d{6}\.json)")))
      << name;
  EXPECT_EQ(r["max_concurrency"], 4);
  EXPECT_EQ(r["rps_change_events"].back()["rps"], 80);
  // Request i is due at the sum of 1 / rate_k for k <= i, rate_k = 10 * 8^(k / 29).
  const auto records =
      records_by_index(dir.path() + "/" + name.substr(0, name.size() - 5) + ".records.jsonl");
  ASSERT_EQ(records.size(), 30u);
  double due_s = 0;
  for (const auto& [index, rec] : records) {
    due_s += 1.0 / (10.0 * std::pow(8.0, static_cast<double>(index) / 29.0));
    EXPECT_NEAR(rec["intended_ns"].get<double>(), due_s * 1e9, 2) << index;
  }
}

TEST(RunRampUp, MultiTurnRampsOverTheConversationsFirstTurns) {
  TempDir dir;
  Outcome o = run(with(base_run(dir.path()),
                       {"--dataset-name", "sharegpt", "--dataset-path", kFixtures + "sharegpt.json",
                        "--multi-turn", "--num-prompts", "12", "--sharegpt-output-len", "4",
                        "--burstiness", "inf", "--ramp-up-strategy", "linear",
                        "--ramp-up-start-rps", "5", "--ramp-up-end-rps", "50"}),
                  90);
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const auto [name, r] = result_in(dir);
  ASSERT_FALSE(name.empty()) << o.err;
  const auto records =
      records_by_index(dir.path() + "/" + name.substr(0, name.size() - 5) + ".records.jsonl");
  // The k-th first turn is due at the sum of 1 / rate_j for j <= k, over the 12 conversations.
  size_t k = 0;
  double due_s = 0;
  for (const auto& [index, rec] : records) {
    if (rec["turn"] != 0) continue;
    due_s += 1.0 / (5.0 + 45.0 * (static_cast<double>(k++) / 11.0));
    EXPECT_NEAR(rec["intended_ns"].get<double>(), due_s * 1e9, 2) << index;
  }
  EXPECT_EQ(k, 12u);
  EXPECT_GT(records.size(), k);  // later turns too, which the ramp does not count
  EXPECT_EQ(r["servebench"]["ramp_up"]["requests"], 12);
  EXPECT_EQ(r["rps_change_events"].back()["rps"], 50);
}

TEST(RunRampUp, FlagMistakesAreOneLineUsageErrorsNamingTheFlag) {
  const std::vector<std::string> ramp = {"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1",
                                         "--ramp-up-end-rps",  "20"};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ramp-up-start-rps", "1"}, "--ramp-up-start-rps"},
      {{"--ramp-up-end-rps", "5"}, "--ramp-up-end-rps"},
      {{"--ramp-up-strategy", "step", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "5"},
       "--ramp-up-strategy"},
      {with(ramp, {"--request-rate", "5"}), "--request-rate"},
      {with(ramp, {"--request-rate", "1,inf"}), "--request-rate"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-end-rps", "5"}, "--ramp-up-start-rps"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1"}, "--ramp-up-end-rps"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "-1", "--ramp-up-end-rps", "5"},
       "--ramp-up-start-rps"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "1", "--ramp-up-end-rps", "-5"},
       "--ramp-up-end-rps"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "6", "--ramp-up-end-rps", "5"},
       "--ramp-up-start-rps"},
      {{"--ramp-up-strategy", "exponential", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "5"},
       "--ramp-up-start-rps"},
      {{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "0", "--ramp-up-end-rps", "5"},
       "--ramp-up-start-rps"},
      {with(ramp, {"--dataset-name", "mooncake", "--dataset-path", "trace.jsonl"}),
       "--ramp-up-strategy"},
      {with(ramp, {"--stages", "1:5"}), "--ramp-up-strategy"},
      {with(ramp, {"--profile", "constant", "--rate", "2"}), "--ramp-up-strategy"},
      {with(ramp, {"--duration", "10"}), "--ramp-up-strategy"},
      {with(ramp, {"--search-slo", "ttft:100"}), "--ramp-up-strategy"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = with({"run"}, extra);
    Outcome o = run(args, 20);
    std::string given;
    for (const std::string& a : extra) given += a + " ";
    EXPECT_EQ(o.exit_code, 2) << given << ": " << o.err;
    std::vector<std::string> lines;
    for (const auto& l : lines_of(o.err))
      if (!l.empty()) lines.push_back(l);
    ASSERT_EQ(lines.size(), 1u) << given << ": " << o.err;
    EXPECT_EQ(lines[0].rfind("servebench: " + flag + ": ", 0), 0u) << given << ": " << lines[0];
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

}  // namespace
}  // namespace servebench::itest
