// vLLM's ramp-up flags' checks (ramp_up_flags.cpp).
#include "cli/ramp_up_flags.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "cli/run_test_support.h"
#include "core/error.h"

namespace servebench::cli {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  RampUpFlags flags;
  std::set<std::string> given;
  std::vector<double> request_rates = {kInf};
};

run::Spec apply(const Case& k) {
  run::Spec c = vllm_default_config();
  c.request_rates = k.request_rates;
  apply_ramp_up_flags(
      k.flags, [&](const char* f) { return k.given.count(f) > 0; }, c);
  return c;
}

// The usage error's text ("<flag>: <message>"), or "" when accepted.
std::string refusal(const Case& k) {
  try {
    apply(k);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    return e.what();
  }
  return "";
}

const std::set<std::string> kAll = {"--ramp-up-strategy", "--ramp-up-start-rps",
                                    "--ramp-up-end-rps"};

TEST(RampUpFlags, AcceptedFlagsSetTheRampAndLeaveTheRateInf) {
  run::Spec c = apply({{"linear", "1", "20"}, kAll});
  ASSERT_TRUE(c.ramp_up);
  EXPECT_EQ(c.ramp_up->strategy, schedule::RampUpStrategy::kLinear);
  EXPECT_EQ(c.ramp_up->start_rps, 1);
  EXPECT_EQ(c.ramp_up->end_rps, 20);
  EXPECT_EQ(c.request_rates, std::vector<double>{kInf});
  EXPECT_TRUE(std::isinf(c.request_rate));
  c = apply({{"exponential", "4", "4"}, kAll});  // start == end: a constant ramp
  ASSERT_TRUE(c.ramp_up);
  EXPECT_EQ(c.ramp_up->strategy, schedule::RampUpStrategy::kExponential);
  // vLLM checks the value: its default, given explicitly, is no conflict.
  Case explicit_inf{{"linear", "1", "2"}, kAll};
  explicit_inf.given.insert("--request-rate");
  EXPECT_EQ(refusal(explicit_inf), "");
  // Without a strategy nothing is set.
  EXPECT_FALSE(apply({{}, {}}).ramp_up);
}

TEST(RampUpFlags, EveryRefusalIsOneLineNamingTheFlag) {
  Case rate{{"linear", "1", "20"}, kAll, {5}};
  rate.given.insert("--request-rate");
  Case rate_list{{"linear", "1", "20"}, kAll, {kInf, kInf}};
  rate_list.given.insert("--request-rate");
  const std::vector<std::pair<Case, std::string>> cases = {
      {{{"", "1", ""}, {"--ramp-up-start-rps"}}, "--ramp-up-start-rps: applies only with"},
      {{{"", "", "5"}, {"--ramp-up-end-rps"}}, "--ramp-up-end-rps: applies only with"},
      {{{"quadratic", "1", "5"}, kAll}, "--ramp-up-strategy: unknown strategy 'quadratic'"},
      {rate, "--request-rate: the request rate is controlled by the ramp-up flags"},
      {rate_list, "--request-rate: the request rate is controlled by the ramp-up flags"},
      {{{"linear", "", "5"}, {"--ramp-up-strategy", "--ramp-up-end-rps"}},
       "--ramp-up-start-rps: is required"},
      {{{"linear", "1", ""}, {"--ramp-up-strategy", "--ramp-up-start-rps"}},
       "--ramp-up-end-rps: is required"},
      {{{"linear", "-1", "5"}, kAll}, "--ramp-up-start-rps: must be >= 0"},
      {{{"linear", "1", "-5"}, kAll}, "--ramp-up-end-rps: must be >= 0"},
      {{{"linear", "1.5", "5"}, kAll}, "--ramp-up-start-rps: expected an integer"},
      {{{"linear", "6", "5"}, kAll}, "--ramp-up-start-rps: must not exceed --ramp-up-end-rps"},
      {{{"exponential", "0", "5"}, kAll},
       "--ramp-up-start-rps: cannot be 0 for the exponential strategy"},
      {{{"linear", "0", "5"}, kAll}, "--ramp-up-start-rps: must be at least 1"},
  };
  for (const auto& [k, prefix] : cases) {
    const std::string e = refusal(k);
    EXPECT_EQ(e.rfind(prefix, 0), 0u) << "expected '" << prefix << "', got '" << e << "'";
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  // The linear start of 0 says why it differs from vLLM.
  EXPECT_NE(refusal({{"linear", "0", "5"}, kAll}).find("vLLM accepts 0"), std::string::npos);
}

}  // namespace
}  // namespace servebench::cli
