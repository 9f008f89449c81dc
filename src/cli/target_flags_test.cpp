// Several targets as flags (target_flags.cpp): --base-url lists, --model lists, --sim-instances.
#include "cli/target_flags.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "core/error.h"

namespace servebench::cli {
namespace {

auto given_flags(std::set<std::string> flags) {
  return [flags](const char* flag) { return flags.count(flag) > 0; };
}

// The error's one line, for checking what it names (and what it must not show).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(BaseUrls, CommaListOrRepeatedFlag) {
  EXPECT_EQ(parse_base_urls("http://a:8000/"), std::vector<std::string>{"http://a:8000"});
  EXPECT_EQ(parse_base_urls("http://a:8000,https://b:8001/v1//"),
            (std::vector<std::string>{"http://a:8000", "https://b:8001/v1"}));
  // CLI11 joins a repeated --base-url with newlines.
  EXPECT_EQ(parse_base_urls("http://a:1\nhttp://b:2"),
            (std::vector<std::string>{"http://a:1", "http://b:2"}));
}

TEST(BaseUrls, BadItemNamesTheFlagWithoutCredentials) {
  const std::string e = error_of([] { parse_base_urls("http://a:1,ftp://user:secret@b:2"); });
  EXPECT_NE(e.find("--base-url: must start with http:// or https://"), std::string::npos) << e;
  EXPECT_EQ(e.find("secret"), std::string::npos) << e;
  EXPECT_NE(error_of([] { parse_base_urls("http://a:1,,http://b:2"); }).find("empty URL"),
            std::string::npos);
}

run::Spec two_servers() {
  run::Spec c;
  c.embedded = false;
  c.target_urls = {"http://u:pw@a:1", "http://b:2"};
  c.base_url = c.target_urls.front();
  c.request_rates = {4};
  c.max_concurrencies = {0};
  return c;
}

TEST(TargetFlags, ModelListNamesEachTarget) {
  run::Spec c = two_servers();
  c.model = "m1,m2";
  apply_target_flags("1", given_flags({"--base-url", "--model"}), c);
  EXPECT_EQ(c.target_models, (std::vector<std::string>{"m1", "m2"}));
  EXPECT_TRUE(run::runs_several_targets(c));

  run::Spec one_for_all = two_servers();
  one_for_all.model = "m";
  apply_target_flags("1", given_flags({"--base-url", "--model"}), one_for_all);
  EXPECT_TRUE(one_for_all.target_models.empty());
}

TEST(TargetFlags, BadCombinationsAreOneLineErrors) {
  run::Spec c = two_servers();
  c.model = "m1,m2,m3";
  EXPECT_NE(error_of([&] {
              apply_target_flags("1", given_flags({"--model"}), c);
            }).find("--model: 3 model names for 2 targets"),
            std::string::npos);
  run::Spec sweep = two_servers();
  sweep.request_rates = {1, 2};
  EXPECT_NE(
      error_of([&] { apply_target_flags("1", given_flags({}), sweep); }).find("--request-rate:"),
      std::string::npos);
  run::Spec server = two_servers();
  EXPECT_NE(error_of([&] {
              apply_target_flags("2", given_flags({"--sim-instances"}), server);
            }).find("--sim-instances:"),
            std::string::npos);
  run::Spec one = two_servers();
  one.target_urls.pop_back();
  one.model = "m1\nm2";  // --model repeated
  EXPECT_NE(error_of([&] {
              apply_target_flags("1", given_flags({"--model"}), one);
            }).find("--model: given more than once"),
            std::string::npos);
  run::Spec embedded;
  embedded.embedded = true;
  EXPECT_NE(error_of([&] {
              apply_target_flags("0", given_flags({"--sim-instances"}), embedded);
            }).find("--sim-instances"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              apply_target_flags("x", given_flags({"--sim-instances"}), embedded);
            }).find("--sim-instances"),
            std::string::npos);
}

TEST(TargetFlags, SimInstancesMakeEmbeddedTargets) {
  run::Spec c;
  c.embedded = true;
  c.request_rates = {1};
  c.max_concurrencies = {0};
  apply_target_flags("3", given_flags({"--sim-instances"}), c);
  EXPECT_EQ(c.sim_instances, 3);
  EXPECT_TRUE(run::runs_several_targets(c));
  run::Spec single;
  single.embedded = true;
  apply_target_flags("1", given_flags({}), single);
  EXPECT_FALSE(run::runs_several_targets(single));
}

}  // namespace
}  // namespace servebench::cli
