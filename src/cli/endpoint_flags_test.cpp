// The target's flags checked at flag time (run_flag_checks.cpp), before any thread starts:
// --ca-cert, framing headers in --header, URL credentials made secrets, negative counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "cli/run_flags.h"
#include "core/error.h"

namespace servebench::cli {
namespace {

std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    run_spec_from_args(args);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage) << e.what();
    const std::string text = e.what();
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
    return text;
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(EndpointFlags, CaCertThatCannotBeReadIsRefusedNamingIt) {
  EXPECT_EQ(usage_error_of({"--ca-cert", "/nonexistent/servebench-ca.pem"}),
            "--ca-cert: '/nonexistent/servebench-ca.pem' cannot be read: No such file or "
            "directory");
  EXPECT_EQ(usage_error_of({"--ca-cert", "/"}),
            "--ca-cert: '/' is a directory; expected a PEM file");
}

TEST(EndpointFlags, CaCertReachesTheSpec) {
  const std::string path = ::testing::TempDir() + "endpoint_flags_ca.pem";
  std::ofstream(path) << "-----BEGIN CERTIFICATE-----\n";
  EXPECT_EQ(run_spec_from_args({"--ca-cert", path}).ca_file, path);
  EXPECT_EQ(run_spec_from_args({}).ca_file, "");
  std::remove(path.c_str());
}

TEST(EndpointFlags, FramingHeadersAreRefusedAtFlagTimeWithoutTheirValue) {
  for (const char* name : {"Content-Length", "transfer-encoding", "Host", "Connection"}) {
    const std::string error = usage_error_of({"--header", std::string(name) + "=VALUE-7f3a"});
    EXPECT_EQ(error.rfind("--header '" + std::string(name) + "': the ", 0), 0u) << error;
    EXPECT_EQ(error.find("VALUE-7f3a"), std::string::npos) << error;
  }
  EXPECT_EQ(run_spec_from_args({"--header", "X-Trace=1"}).headers,
            std::vector<std::string>{"X-Trace: 1"});
}

TEST(EndpointFlags, UrlPasswordIsASecretOnceTheFlagsAreChecked) {
  const std::string password = "pw-endpoint-flags-91c2";
  ASSERT_NE(core::redact_secrets("x " + password), "x <redacted>");
  run_spec_from_args({"--base-url", "http://user:" + password + "@127.0.0.1:1", "--model", "m"});
  EXPECT_EQ(core::redact_secrets("x " + password).find(password), std::string::npos);
}

TEST(EndpointFlags, NegativeCountsAreRefusedNamingTheFlag) {
  EXPECT_EQ(usage_error_of({"--num-warmups", "-1"}), "--num-warmups: must be >= 0, got -1");
  EXPECT_EQ(usage_error_of({"--num-prompts", "-5"}), "--num-prompts: must be >= 1, got -5");
  EXPECT_EQ(usage_error_of({"--max-concurrency", "-2"}), "--max-concurrency: must be >= 1, got -2");
  EXPECT_EQ(usage_error_of({"--request-rate", "-3"}),
            "--request-rate: must be a positive number or inf, got -3");
  EXPECT_EQ(run_spec_from_args({"--num-warmups", "0"}).num_warmups, 0);
}

}  // namespace
}  // namespace servebench::cli
