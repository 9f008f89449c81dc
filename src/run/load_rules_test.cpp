// GuideLLM's rules during a point (load_rules.cpp): stop rules and the warmup/cooldown split.
#include "run/load_rules.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace servebench::run {
namespace {

record::RequestRecord outcome(uint64_t index, bool ok, const std::string& error = "") {
  record::RequestRecord r;
  r.index = index;
  r.sent_ns = static_cast<int64_t>(index) * 1000;
  r.done_ns = r.sent_ns + 500;
  r.success = ok;
  r.http_status = ok ? 200 : 500;
  r.error = ok ? "" : (error.empty() ? "HTTP 500: Internal Server Error" : error);
  if (ok) r.first_token_ns = r.last_token_ns = r.sent_ns + 100;
  return r;
}

TEST(StopRules, MaxErrorsCountsErrorsNotCancellationsAndSetsTheStopFlag) {
  RunLimits limits;
  limits.max_errors = 2;
  std::atomic<bool> stop{false};
  StopRules rules(limits, &stop);
  rules.observe(outcome(0, false));
  record::RequestRecord cancelled =
      outcome(1, false, "cancelled: still running when the run's duration ended");
  cancelled.http_status = 200;  // the stream had begun
  rules.observe(cancelled);
  record::RequestRecord unsent = outcome(2, false, "not sent: stopped");
  unsent.sent_ns = -1;
  rules.observe(unsent);
  rules.observe(outcome(3, true));
  EXPECT_FALSE(rules.tripped());
  EXPECT_FALSE(stop.load());
  rules.observe(outcome(4, false));
  EXPECT_TRUE(rules.tripped());
  EXPECT_TRUE(stop.load());
  EXPECT_EQ(rules.outcome().rule, "max_errors");
  EXPECT_EQ(rules.outcome().message, "--max-errors 2: 2 requests errored");
  EXPECT_EQ(rules.outcome().processed, 4u);  // the unsent one was never processed
}

TEST(StopRules, MaxErrorRateNeedsAFullWindowThenLooksAtTheLast30) {
  RunLimits limits;
  limits.max_error_rate = 0.5;
  std::atomic<bool> stop{false};
  StopRules rules(limits, &stop);
  // 20 errors first: 100% but fewer than 30 processed, so no stop yet.
  for (uint64_t i = 0; i < 20; ++i) rules.observe(outcome(i, false));
  EXPECT_FALSE(rules.tripped());
  // Then successes: at 30 processed, 20/30 errored >= 50%: stop.
  for (uint64_t i = 20; i < 29; ++i) rules.observe(outcome(i, true));
  EXPECT_FALSE(rules.tripped());
  rules.observe(outcome(29, true));
  EXPECT_TRUE(rules.tripped());
  EXPECT_EQ(rules.outcome().rule, "max_error_rate");
  EXPECT_EQ(rules.outcome().message, "--max-error-rate 0.5: 20 of the last 30 requests errored");
}

TEST(StopRules, OldErrorsLeaveTheWindow) {
  RunLimits limits;
  limits.max_error_rate = 0.5;
  StopRules rules(limits, nullptr);
  for (uint64_t i = 0; i < 14; ++i) rules.observe(outcome(i, false));
  for (uint64_t i = 14; i < 44; ++i) rules.observe(outcome(i, true));  // 14/30 then fewer
  EXPECT_FALSE(rules.tripped());
  for (uint64_t i = 44; i < 58; ++i) rules.observe(outcome(i, false));  // last 30: 14 errors
  EXPECT_FALSE(rules.tripped());
  rules.observe(outcome(58, false));  // 15 of the last 30
  EXPECT_TRUE(rules.tripped());
}

TEST(Trim, MeasuredRecordsAndTheirOwnDurationAndTheRecordsFileMarked) {
  Spec c;
  c.limits.transients.warmup.number = 1;
  c.limits.transients.cooldown.number = 1;
  std::vector<record::RequestRecord> records;
  for (uint64_t i = 0; i < 4; ++i) records.push_back(outcome(i, true));
  TrimmedRun t = trim_transients(c, records);
  ASSERT_TRUE(t.trimmed);
  ASSERT_EQ(t.measured.size(), 2u);
  EXPECT_EQ(t.measured[0].index, 1u);
  EXPECT_DOUBLE_EQ(t.duration_s, 1.5e-6);  // sent at 1000 ns, the last done at 2500 ns

  const std::string path =
      (std::filesystem::temp_directory_path() / "servebench_trim_test.jsonl").string();
  {
    std::ofstream out(path);
    for (const auto& r : records) out << record::to_json_line(r) << "\n";
    record::RequestRecord warm = outcome(0, true);
    warm.warmup = true;  // a --num-warmups record with the same index: left alone
    out << record::to_json_line(warm) << "\n";
  }
  mark_excluded_records(path, records, t.split);
  std::ifstream in(path);
  std::vector<std::string> marks;
  for (std::string line; std::getline(in, line);)
    marks.push_back(nlohmann::json::parse(line).value("excluded", ""));
  std::filesystem::remove(path);
  EXPECT_EQ(marks, (std::vector<std::string>{"warmup", "", "", "cooldown", ""}));
}

}  // namespace
}  // namespace servebench::run
