// Flag values read as vLLM's argparse reads them (values.h).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "cli/values.h"
#include "core/error.h"

namespace servebench::cli {
namespace {

void expect_usage(const std::function<void()>& f, const std::string& where,
                  const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_EQ(e.where(), where);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ParsePairs, SplitsAtFirstSeparatorStripsAndKeepsLast) {
  auto pairs = parse_pairs("--metadata", {"a=1", " b = x=y ", "a=2"}, '=');
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], (std::pair<std::string, std::string>("a", "2")));
  EXPECT_EQ(pairs[1], (std::pair<std::string, std::string>("b", "x=y")));
}

TEST(ParsePairs, BadItemsNameTheFlagWithoutEchoingValues) {
  expect_usage([] { parse_pairs("--header", {"Authorization: Bearer sk-secret123456"}, '='); },
               "--header", "item 1 is not KEY=VALUE");
  try {
    parse_pairs("--header", {"Authorization: Bearer sk-secret123456"}, '=');
  } catch (const core::Error& e) {
    EXPECT_EQ(std::string(e.what()).find("secret"), std::string::npos);
  }
  expect_usage([] { parse_pairs("--metadata", {"=v"}, '='); }, "--metadata", "empty KEY");
}

TEST(ParseNumbers, RejectGarbageAndOutOfRange) {
  EXPECT_EQ(parse_int("--num-prompts", " 12 ", 1, 100), 12);
  EXPECT_EQ(parse_int("--num-prompts", "+7", 1, 100), 7);
  expect_usage([] { parse_int("--num-prompts", "abc", 1, 100); }, "--num-prompts", "'abc'");
  expect_usage([] { parse_int("--num-prompts", "-5", 1, 100); }, "--num-prompts", ">= 1, got -5");
  expect_usage([] { parse_int("--num-prompts", "101", 1, 100); }, "--num-prompts", "<= 100");
  expect_usage([] { parse_int("--num-prompts", "1.5", 1, 100); }, "--num-prompts", "'1.5'");
  EXPECT_TRUE(std::isinf(parse_double("--request-rate", "inf")));
  EXPECT_EQ(parse_double("--request-rate", "1e1"), 10.0);
  expect_usage([] { parse_double("--request-rate", "fast"); }, "--request-rate", "'fast'");
  expect_usage([] { parse_double("--request-rate", "nan"); }, "--request-rate", "'nan'");
}

TEST(ParsePercentileMetrics, KnownNamesOnly) {
  EXPECT_EQ(parse_percentile_metrics("ttft,tpot,itl,e2el"),
            (std::vector<std::string>{"ttft", "tpot", "itl", "e2el"}));
  expect_usage([] { parse_percentile_metrics("ttft,latency"); }, "--percentile-metrics",
               "'latency'");
}

}  // namespace
}  // namespace servebench::cli
