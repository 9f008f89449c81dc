// GuideLLM's load flags (load_flags.cpp): what they make of the spec, and what they refuse.
#include "cli/load_flags.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <set>

#include "cli/run_test_support.h"
#include "core/error.h"

namespace servebench::cli {
namespace {

struct Flags {
  LoadFlags load;
  std::set<std::string> given;
  std::function<bool(const char*)> fn() const {
    return [this](const char* f) { return given.count(f) > 0; };
  }
};

run::Spec apply(Flags f, run::Spec c = vllm_default_config()) {
  apply_load_flags(f.load, f.fn(), c);
  return c;
}

// The usage error's text (the flag it names comes first), or "" when accepted.
std::string refusal(Flags f, run::Spec c = vllm_default_config()) {
  try {
    apply_load_flags(f.load, f.fn(), c);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

TEST(LoadFlags, ProfileAndRateBecomeTheBenchmarks) {
  Flags f;
  f.load.profile = "concurrent";
  f.load.rate = "1,4";
  f.given = {"--profile", "--rate"};
  run::Spec c = apply(f);
  EXPECT_EQ(c.limits.profile, run::LoadProfile::kConcurrent);
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
  run::Spec c = vllm_default_config();
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
  run::Spec c = apply(f);
  EXPECT_EQ(c.num_prompts, 300);  // the largest rate × duration
  EXPECT_EQ(c.limits.max_requests, 300u);
  EXPECT_FALSE(c.limits.max_requests_given);
  f.given.insert("--num-prompts");
  run::Spec capped = vllm_default_config();
  capped.num_prompts = 50;
  capped = apply(f, capped);
  EXPECT_EQ(capped.num_prompts, 50);
  EXPECT_TRUE(capped.limits.max_requests_given);
}

TEST(LoadFlags, GuidellmWarmupIsAFractionBelowOneElseACountAndSeconds) {
  Flags f{{.warmup = "0.1", .cooldown = "2.5"}, {"--warmup", "--cooldown"}};
  run::Spec c = apply(f);
  EXPECT_DOUBLE_EQ(c.limits.transients.warmup.fraction, 0.1);
  EXPECT_EQ(c.limits.transients.warmup.number, 0u);
  EXPECT_EQ(c.limits.transients.cooldown.number, 3u);  // processed < 2.5: three requests
  EXPECT_DOUBLE_EQ(c.limits.transients.cooldown.seconds, 2.5);
}

TEST(LoadFlags, SweepDefaultsToGuidellmsTenBenchmarks) {
  Flags f{{.profile = "sweep"}, {"--profile"}};
  run::Spec c = apply(f);
  EXPECT_EQ(c.limits.sweep_size, 10);  // GuideLLM's default
}

}  // namespace
}  // namespace servebench::cli
