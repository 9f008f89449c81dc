// Injected faults (x-servebench-fault, --fault rules) as a client sees them on the wire.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "sim/server_test_client.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

Response faulted(uint16_t port, const std::string& fault, bool stream = true,
                 RawClient* reuse = nullptr) {
  RawClient own(port);
  RawClient& c = reuse ? *reuse : own;
  return c.request("POST", "/v1/completions", completion_body(6, stream),
                   "x-servebench-fault: " + fault + "\r\n");
}

TEST_F(SimServerTest, FaultHttpStatuses) {
  for (int status : {429, 500, 503}) {
    Response r = faulted(port_, std::to_string(status));
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(json::parse(r.body)["error"]["code"], status);
  }
}

TEST_F(SimServerTest, FaultResetClosesAfterNTokens) {
  Response r = faulted(port_, "reset:2");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.events().size(), 2u);
}

TEST_F(SimServerTest, FaultStallPausesThenFinishes) {
  int64_t t0 = core::mono_ns();
  Response r = faulted(port_, "stall:2:0.3");
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.events().size(), 7u);  // 6 tokens + [DONE]
  EXPECT_GE(r.chunk_ns[2] - r.chunk_ns[1], 250'000'000);
  EXPECT_GE(core::mono_ns() - t0, 300'000'000);
}

TEST_F(SimServerTest, FaultMalformedSendsOneBrokenEvent) {
  Response r = faulted(port_, "malformed:1");
  ASSERT_TRUE(r.complete);
  auto events = r.events();
  ASSERT_EQ(events.size(), 8u);  // 6 tokens, one broken, [DONE]
  int broken = 0;
  for (const auto& e : events) {
    if (e != "[DONE]" && !json::accept(e)) ++broken;
  }
  EXPECT_EQ(broken, 1);
  EXPECT_FALSE(json::accept(events[1]));
}

TEST_F(SimServerTest, FaultTruncateEndsBodyWithoutDoneAndKeepsConnection) {
  RawClient c(port_);
  Response r = faulted(port_, "truncate:3", true, &c);
  ASSERT_TRUE(r.complete);  // proper chunked terminator
  auto events = r.events();
  EXPECT_EQ(events.size(), 3u);
  for (const auto& e : events) EXPECT_NE(e, "[DONE]");
  EXPECT_EQ(c.request("GET", "/health").status, 200);
}

TEST_F(SimServerTest, FaultErrorEventAfter200ThenClose) {
  RawClient c(port_);
  Response r = faulted(port_, "error-event:2", true, &c);
  EXPECT_EQ(r.status, 200);
  auto events = r.events();
  ASSERT_EQ(events.size(), 3u);
  json err = json::parse(events[2]);
  EXPECT_EQ(err["error"]["code"], 500);
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(SimServerTest, FaultAtTokenZeroAndAfterTheLastToken) {
  Response r = faulted(port_, "reset:0");
  EXPECT_EQ(r.status, 200);  // headers went out at arrival
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.events().size(), 0u);
  // AFTER_TOKENS past the output length: all 6 tokens, then the fault instead of the close.
  r = faulted(port_, "truncate:99");
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.events().size(), 6u);
  r = faulted(port_, "stall:99:0.2");
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.events().size(), 7u);
  EXPECT_GE(r.chunk_ns[6] - r.chunk_ns[5], 150'000'000);
}

TEST_F(SimServerTest, FaultsOnNonStreamingRequests) {
  {
    RawClient c(port_);
    Response r = faulted(port_, "error-event:2", false, &c);
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(json::parse(r.body)["error"]["code"], 500);
    EXPECT_EQ(c.request("GET", "/health").status, 200);  // kept alive
  }
  Response r = faulted(port_, "malformed", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(json::accept(r.body));
  r = faulted(port_, "truncate", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.closed);
  r = faulted(port_, "reset:3", false);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.closed);
  int64_t t0 = core::mono_ns();
  r = faulted(port_, "stall:1:0.2", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 6);
  EXPECT_GE(core::mono_ns() - t0, 200'000'000);
}

TEST_F(SimServerTest, BadFaultHeaderIs400) {
  Response r = faulted(port_, "explode");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(json::parse(r.body)["error"]["message"].get<std::string>().find("explode"),
            std::string::npos);
}

TEST(SimServerFaultRules, SeededRulesApplyToEveryRequestAtProbabilityOne) {
  Options o = fast_options();
  o.faults.push_back(parse_fault_rule("503:1"));
  Server s(o);
  s.start();
  RawClient c(s.port());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.request("POST", "/v1/completions", completion_body(2, false)).status, 503);
  }
}

TEST(SimServerFaultRules, ProbabilityIsSeededAndDeterministic) {
  auto pattern = [] {
    Options o = fast_options();
    o.faults.push_back(parse_fault_rule("429:0.5"));
    Server s(o);
    s.start();
    RawClient c(s.port());
    std::string p;
    for (int i = 0; i < 16; ++i) {
      p +=
          c.request("POST", "/v1/completions", completion_body(1, false)).status == 429 ? 'x' : '.';
    }
    return p;
  };
  std::string a = pattern();
  EXPECT_EQ(a, pattern());
  EXPECT_NE(a.find('x'), std::string::npos);
  EXPECT_NE(a.find('.'), std::string::npos);
}

}  // namespace
}  // namespace servebench::sim
