// The --search-* flags' checks (search_flags.cpp).
#include "cli/search_flags.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "core/error.h"

namespace servebench::cli {
namespace {

TEST(SloSearch, FlagsAreCheckedNamingTheFlag) {
  run::Spec c;
  c.request_rates = {1};
  c.max_concurrencies = {0};
  SearchFlags f;
  f.slo = {"ttft:500,tpot:50"};
  const run::SearchPlan plan = validate_search(f, c);
  EXPECT_DOUBLE_EQ(plan.slo_ms.at("ttft"), 500);
  EXPECT_DOUBLE_EQ(plan.slo_ms.at("tpot"), 50);
  EXPECT_DOUBLE_EQ(plan.attainment, 0.9);
  f.slo = {"ttft:500", "e2el:2000"};  // vLLM's --goodput spelling
  EXPECT_EQ(validate_search(f, c).slo_ms.size(), 2u);
  auto error_of = [&](const std::function<void()>& fn) -> std::string {
    try {
      fn();
    } catch (const core::Error& e) {
      EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
      return e.what();
    }
    return "no error";
  };
  f.slo = {"speed:5"};
  EXPECT_EQ(error_of([&] { validate_search(f, c); }).rfind("--search-slo: ", 0), 0u);
  f.slo = {"ttft:500"};
  f.attainment = "150";
  EXPECT_EQ(error_of([&] { validate_search(f, c); }).rfind("--search-attainment: ", 0), 0u);
  f.attainment = "90";
  c.request_rates = {1, 2};
  EXPECT_EQ(error_of([&] { validate_search(f, c); }).rfind("--search-slo: searches one load", 0),
            0u);
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.ramp_up = schedule::RampUp{schedule::RampUpStrategy::kLinear, 1, 20};
  EXPECT_EQ(error_of([&] { validate_search(f, c); }).rfind("--ramp-up-strategy: ", 0), 0u);
}

}  // namespace
}  // namespace servebench::cli
