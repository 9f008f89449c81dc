// The client's boundary with its endpoint (issue 19): localhost reached on either loopback,
// URL credentials sent but never written, framing headers refused, huge timeouts clamped, and a
// private CA file (Endpoint::ca_file, CURL_CA_BUNDLE, SSL_CERT_FILE) for TLS.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/testing/client_runs.h"
#include "client/testing/script_server.h"
#include "client/transport.h"
#include "core/error.h"

namespace servebench::client::testing {
namespace {

using record::RequestRecord;

// --- localhost: both loopbacks (issue 19, defect 9)

TEST_P(ClientRun, LocalhostReachesAServerListeningOnIpv6LoopbackOnly) {
  auto script = [](const Request& request) {
    return testing::sse_reply(completion_events(request, 2));
  };
  std::unique_ptr<ScriptServer> server;
  try {
    server = std::make_unique<ScriptServer>(script, ScriptServer::Loopback::kIpv6);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << "no IPv6 loopback: " << error.what();
  }
  Endpoint endpoint = endpoint_for(*server);
  endpoint.url = "http://localhost:" + std::to_string(server->port()) + "/v1/completions";
  // The ready check (libcurl) and the run (either engine) reach the same server.
  EXPECT_NO_THROW(wait_until_ready(endpoint, 10));
  RunResult result = run_plan(endpoint, body_options(), make_plan(3, 2));
  expect_one_record_each(result, 3);
  for (const RequestRecord& r : result.records) EXPECT_TRUE(r.success) << r.error;
  EXPECT_EQ(server->requests().size(), 4u);
}

// --- URL credentials: sent as Basic auth (as aiohttp does), never written (defect 6)

TEST_P(ClientRun, UrlCredentialsAreSentAsBasicAuthButNeverRecorded) {
  ScriptServer server([](const Request& request) {
    const std::string auth = request.header("authorization");
    if (request_index(request) == 0)  // a server that echoes the header it refused
      return testing::json_reply(401, openai_error("bad credentials " + auth));
    std::vector<std::string> events = completion_events(request, 2);
    events.insert(events.begin(), R"({"error":"rejected )" + auth + R"("})");
    return testing::sse_reply(events);
  });
  Endpoint endpoint = endpoint_for(server);
  // "%21" is '!': the password sent is "Pa55!word-basic".
  endpoint.url = "http://bench:Pa55%21word-basic@127.0.0.1:" + std::to_string(server.port()) +
                 "/v1/completions";
  const std::string token = "YmVuY2g6UGE1NSF3b3JkLWJhc2lj";  // base64("bench:Pa55!word-basic")
  RunResult result = run_plan(endpoint, body_options(), make_plan(2, 2));
  expect_one_record_each(result, 2);
  EXPECT_EQ(result.of(0).error.rfind("HTTP 401: bad credentials ", 0), 0u) << result.of(0).error;
  EXPECT_EQ(result.of(1).error.rfind("server error event: rejected ", 0), 0u) << result.of(1).error;
  for (const RequestRecord& r : result.records) {
    const std::string line = record::to_json_line(r);
    for (const std::string& secret :
         {token, std::string("Pa55!word-basic"), std::string("Pa55%21word-basic")}) {
      EXPECT_EQ(r.error.find(secret), std::string::npos) << r.error;
      EXPECT_EQ(line.find(secret), std::string::npos) << line;
      EXPECT_EQ(core::redact_secrets("echo: " + secret).find(secret), std::string::npos);
    }
  }
  for (const Request& request : server.requests())
    EXPECT_EQ(request.header("authorization"), "Basic " + token);
}

// --- framing headers (item 10)

TEST(CheckExtraHeader, FramingHeadersAreRefusedByName) {
  for (const char* name : {"Transfer-Encoding", "content-length", "HOST", "Connection "}) {
    try {
      check_extra_header(name);
      ADD_FAILURE() << name << " accepted";
    } catch (const core::Error& error) {
      EXPECT_EQ(error.kind(), core::ErrorKind::kUsage);
      const std::string what = error.what();
      EXPECT_NE(what.find("--header"), std::string::npos) << what;
      EXPECT_NE(what.find("header frames the request"), std::string::npos) << what;
    }
  }
  for (const char* name : {"X-Custom", "Content-Type", "Hostname", "Authorization"})
    EXPECT_NO_THROW(check_extra_header(name)) << name;
}

TEST_P(ClientRun, AFramingExtraHeaderIsRefusedBeforeAnythingIsSent) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 1)); });
  Endpoint endpoint = endpoint_for(server);
  endpoint.headers = {"X-Custom: yes", "Transfer-Encoding: chunked"};
  try {
    run_plan(endpoint, body_options(), make_plan(2, 1));
    ADD_FAILURE() << "no exception";
  } catch (const core::Error& error) {
    EXPECT_NE(std::string(error.what()).find("Transfer-Encoding"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW(wait_until_ready(endpoint, 1), core::Error);
  EXPECT_TRUE(server.requests().empty());
}

// --- timeouts in seconds past int64 ns (item 10)

TEST(TimeoutNs, ClampedNeverNegative) {
  EXPECT_EQ(detail::timeout_ns(1e10, 0.001), static_cast<int64_t>(kMaxTimeoutS * 1e9));
  EXPECT_EQ(detail::timeout_ns(std::numeric_limits<double>::infinity(), 0),
            static_cast<int64_t>(kMaxTimeoutS * 1e9));
  EXPECT_EQ(detail::timeout_ns(std::nan(""), 0), static_cast<int64_t>(kMaxTimeoutS * 1e9));
  EXPECT_EQ(detail::timeout_ns(-5, 0.001), 1'000'000);
  EXPECT_EQ(detail::timeout_ns(2.5, 0.001), 2'500'000'000);
}

TEST_P(ClientRun, AHugeRequestTimeoutIsClampedNotWrapped) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/5);
  });
  Endpoint endpoint = endpoint_for(server);
  endpoint.timeout_s = 1e10;  // 1e19 ns: past int64
  EXPECT_NO_THROW(wait_until_ready(endpoint, 1e10));
  RunOptions options;
  options.drain_timeout_s = 1e10;
  RunResult result = run_plan(endpoint, body_options(), make_plan(2, 2), options);
  expect_one_record_each(result, 2);
  for (const RequestRecord& r : result.records) EXPECT_TRUE(r.success) << r.error;
}

}  // namespace
}  // namespace servebench::client::testing
