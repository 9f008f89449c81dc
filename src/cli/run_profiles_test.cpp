#include "cli/run_profiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "cli/run_test_support.h"
#include "core/error.h"

namespace servebench::cli::run {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Flags {
  LoadFlags load;
  std::set<std::string> given;
  std::function<bool(const char*)> fn() const {
    return [this](const char* f) { return given.count(f) > 0; };
  }
};

RunConfig apply(Flags f, RunConfig c = vllm_default_config()) {
  apply_load_flags(f.load, f.fn(), c);
  return c;
}

// The usage error's text (the flag it names comes first), or "" when accepted.
std::string refusal(Flags f, RunConfig c = vllm_default_config()) {
  try {
    apply_load_flags(f.load, f.fn(), c);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

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

report::RunResult result_with_rate(double rate) {
  report::RunResult r;
  r.result = {{"request_throughput", rate}};
  return r;
}

TEST(LoadFlags, ProfileAndRateBecomeTheBenchmarks) {
  Flags f;
  f.load.profile = "concurrent";
  f.load.rate = "1,4";
  f.given = {"--profile", "--rate"};
  RunConfig c = apply(f);
  EXPECT_EQ(c.limits.profile, LoadProfile::kConcurrent);
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto first = seq.next(done);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->limits.benchmark, "concurrent@1");
  EXPECT_EQ(first->max_concurrency, 1);
  EXPECT_TRUE(std::isinf(first->request_rate));
  auto second = seq.next(done);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->limits.benchmark, "concurrent@4");
  EXPECT_EQ(second->limits.sequence, 1u);
  EXPECT_FALSE(seq.next(done));
}

TEST(LoadFlags, CombinationsWithVllmFlagsAreRefusedNamingTheFlag) {
  auto refused = [](std::set<std::string> given, LoadFlags load, const std::string& flag) {
    Flags f{load, given};
    const std::string why = refusal(f);
    EXPECT_EQ(why.rfind(flag + ":", 0), 0u) << why;
  };
  refused({"--profile", "--request-rate"}, {.profile = "constant", .rate = "2"}, "--request-rate");
  refused({"--profile", "--burstiness"}, {.profile = "poisson", .rate = "2"}, "--burstiness");
  refused({"--rate"}, {.rate = "2"}, "--rate");
  // vLLM's ramp-up sets the load too: not with a profile, and not cut off by a duration.
  refused({"--profile", "--rate", "--ramp-up-strategy"}, {.profile = "constant", .rate = "2"},
          "--ramp-up-strategy");
  refused({"--duration", "--ramp-up-strategy"}, {.duration = "10"}, "--ramp-up-strategy");
  refused({"--profile"}, {.profile = "bogus"}, "--profile");
  refused({"--profile"}, {.profile = "constant"}, "--rate");  // constant needs a rate
  refused({"--profile", "--rate"}, {.profile = "synchronous", .rate = "2"}, "--rate");
  refused({"--profile", "--rate"}, {.profile = "concurrent", .rate = "1.5"}, "--rate");
  refused({"--profile", "--rate"}, {.profile = "sweep", .rate = "1"}, "--rate");  // at least 2
  refused({"--duration"}, {.duration = "0"}, "--duration");
  refused({"--max-error-rate"}, {.max_error_rate = "1"}, "--max-error-rate");
  refused({"--max-errors"}, {.max_errors = "0"}, "--max-errors");
  refused({"--warmup", "--warmup-number"}, {.warmup = "0.1", .warmup_number = "3"},
          "--warmup-number");
  refused({"--warmup"}, {.warmup = "-1"}, "--warmup");
  // Several runs cannot share one file name.
  refused({"--profile", "--records"}, {.profile = "sweep"}, "--records");
  Flags conc{{.profile = "concurrent", .rate = "4"}, {"--profile", "--rate", "--max-concurrency"}};
  RunConfig c = vllm_default_config();
  c.max_concurrency = 8;
  c.max_concurrencies = {8};
  EXPECT_EQ(refusal(conc, c).rfind("--max-concurrency:", 0), 0u);
  Flags slow{{.duration = "1"}, {"--duration", "--request-rate"}};
  c = vllm_default_config();
  c.request_rates = {0.1};  // the first vLLM arrival is due at 10 s
  EXPECT_EQ(refusal(slow, c).rfind("--duration:", 0), 0u);
  Flags trace{{.profile = "synchronous"}, {"--profile"}};
  c = vllm_default_config();
  c.dataset.name = "mooncake";
  c.self_timed = true;  // as run_command.cpp sets it without --no-self-timed
  EXPECT_EQ(refusal(trace, c).rfind("--profile:", 0), 0u);
}

TEST(LoadFlags, RateTimesDurationSizesTheRunUnlessNumPromptsCapsIt) {
  Flags f{{.profile = "constant", .rate = "4,10", .duration = "30"},
          {"--profile", "--rate", "--duration"}};
  RunConfig c = apply(f);
  EXPECT_EQ(c.num_prompts, 300);  // the largest rate × duration
  EXPECT_EQ(c.limits.max_requests, 300u);
  EXPECT_FALSE(c.limits.max_requests_given);
  f.given.insert("--num-prompts");
  RunConfig capped = vllm_default_config();
  capped.num_prompts = 50;
  capped = apply(f, capped);
  EXPECT_EQ(capped.num_prompts, 50);
  EXPECT_TRUE(capped.limits.max_requests_given);
}

TEST(LoadFlags, GuidellmWarmupIsAFractionBelowOneElseACountAndSeconds) {
  Flags f{{.warmup = "0.1", .cooldown = "2.5"}, {"--warmup", "--cooldown"}};
  RunConfig c = apply(f);
  EXPECT_DOUBLE_EQ(c.limits.transients.warmup.fraction, 0.1);
  EXPECT_EQ(c.limits.transients.warmup.number, 0u);
  EXPECT_EQ(c.limits.transients.cooldown.number, 3u);  // processed < 2.5: three requests
  EXPECT_DOUBLE_EQ(c.limits.transients.cooldown.seconds, 2.5);
}

TEST(Sweep, SynchronousThenThroughputThenLinspacedConstantRates) {
  Flags f{{.profile = "sweep", .rate = "6"}, {"--profile", "--rate"}};
  RunConfig c = apply(f);
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto sync = seq.next(done);
  ASSERT_TRUE(sync);
  EXPECT_EQ(sync->limits.benchmark, "synchronous");
  EXPECT_EQ(sync->max_concurrency, 1);
  done.push_back(result_with_rate(1.0));
  auto thr = seq.next(done);
  ASSERT_TRUE(thr);
  EXPECT_EQ(thr->limits.benchmark, "throughput");
  EXPECT_EQ(thr->max_concurrency, 512);  // GuideLLM's default cap
  done.push_back(result_with_rate(9.0));
  // np.linspace(1, 9, 5)[1:] = 3, 5, 7, 9: the last constant rate is the throughput rate.
  std::vector<double> rates;
  for (auto next = seq.next(done); next; next = seq.next(done)) {
    EXPECT_EQ(next->limits.strategy, LoadProfile::kConstant);
    EXPECT_TRUE(std::isinf(next->burstiness));
    rates.push_back(next->request_rate);
    done.push_back(result_with_rate(next->request_rate));
  }
  EXPECT_EQ(rates, (std::vector<double>{3, 5, 7, 9}));
  EXPECT_EQ(done.size(), 6u);
}

TEST(Sweep, EndsAfterTwoBenchmarksWhenNothingCompleted) {
  Flags f{{.profile = "sweep"}, {"--profile"}};
  RunConfig c = apply(f);
  EXPECT_EQ(c.limits.sweep_size, 10);  // GuideLLM's default
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(2.0));
  ASSERT_TRUE(seq.next(done));
  done.push_back(result_with_rate(0.0));
  EXPECT_FALSE(seq.next(done));
}

TEST(BoundedPlan, ConstantRateOverADurationCyclesThePrompts) {
  Flags f{{.profile = "constant", .rate = "4", .duration = "2"},
          {"--profile", "--rate", "--duration"}};
  RunConfig c = apply(f);
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  RunConfig point = *seq.next(done);
  std::vector<dataset::Prompt> prompts(3);
  for (int i = 0; i < 3; ++i) prompts[i].text = "p" + std::to_string(i);
  auto plan = bounded_plan(point, prompts);
  ASSERT_EQ(plan.size(), 8u);  // 4 req/s × 2 s, due at 0, 0.25, …, 1.75 s
  EXPECT_EQ(plan[7].intended_ns, 1'750'000'000);
  EXPECT_EQ(plan[4].prompt, "p1");  // 4 % 3
  EXPECT_EQ(plan[7].index, 7u);
}

TEST(BoundedPlan, ConcurrencyProfilesPlanTheCapAllDueAtStart) {
  Flags f{{.profile = "synchronous", .duration = "5"}, {"--profile", "--duration"}};
  RunConfig c = vllm_default_config();
  c.num_prompts = 20;
  c = apply(f, c);
  BenchmarkSequence seq(c);
  std::vector<report::RunResult> done;
  auto plan = bounded_plan(*seq.next(done), std::vector<dataset::Prompt>(4));
  ASSERT_EQ(plan.size(), 20u);
  for (const auto& p : plan) EXPECT_EQ(p.intended_ns, 0);
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
  RunConfig c = vllm_default_config();
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
}  // namespace servebench::cli::run
