// client::run and client::wait_until_ready against a scripted HTTP/1.1 server on loopback:
// streams, failures, the continuous-usage fallback, secrets. Conversations and pacing, stop and
// drain are in client_conversation_test.cpp and client_pacing_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/testing/client_runs.h"
#include "client/testing/script_server.h"
#include "client/transport.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::testing {
namespace {

using record::RequestRecord;

// --- run: normal streams

TEST_P(ClientRun, NormalStreamsGiveSuccessRecords) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 4), /*delay_ms=*/5);
  });
  std::vector<PlannedRequest> plan = make_plan(3, 4);
  plan[1].warmup = true;
  RunResult result = run_plan(endpoint_for(server), body_options(), plan);

  expect_one_record_each(result, 3);
  // The client's threads (a loop or the delivering one), never the caller, one call at a time.
  EXPECT_FALSE(result.sink_on_caller_thread);
  EXPECT_EQ(result.sink_calls_at_once, 1);
  for (const RequestRecord& r : result.records) {
    SCOPED_TRACE("index " + std::to_string(r.index));
    EXPECT_TRUE(r.success);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.request_id, "req-" + std::to_string(r.index));
    EXPECT_EQ(r.warmup, r.index == 1);
    EXPECT_EQ(r.intended_ns, 0);
    EXPECT_EQ(r.prompt_tokens, 3);
    EXPECT_EQ(r.expected_output_tokens, 4);
    EXPECT_EQ(r.chunk_ns.size(), 4u);
    EXPECT_EQ(r.chunk_tokens, (std::vector<int32_t>{1, 1, 1, 1}));
    EXPECT_EQ(r.server_completion_tokens, 4);
    EXPECT_EQ(r.server_prompt_tokens, kPromptTokens);
    EXPECT_EQ(r.generated_text, expected_text(4));
    EXPECT_EQ(r.client_output_tokens, -1);  // the server's usage says: nothing to count
    EXPECT_GE(r.sent_ns, 0);
    EXPECT_GE(r.first_byte_ns, r.sent_ns);
    EXPECT_GE(r.first_token_ns, r.first_byte_ns);
    EXPECT_EQ(r.first_token_ns, r.chunk_ns.front());
    EXPECT_EQ(r.last_token_ns, r.chunk_ns.back());
    EXPECT_TRUE(std::is_sorted(r.chunk_ns.begin(), r.chunk_ns.end()));
    EXPECT_GE(r.done_ns, r.last_token_ns);
  }
  EXPECT_EQ(result.stats.sse_events, 3u * 6u);  // 4 tokens, usage, [DONE]
  EXPECT_GT(result.stats.bytes_received, 0u);
  EXPECT_GT(result.stats.duration_s, 0.0);
  EXPECT_GT(result.stats.t0_mono_ns, 0);

  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  std::map<int, int> seen;
  for (const Request& request : requests) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/v1/completions");
    EXPECT_EQ(request.header("content-type"), "application/json");
    EXPECT_EQ(request.header("authorization"), "");  // no api_key
    EXPECT_EQ(request.header("expect"), "");
    int index = request_index(request);
    ++seen[index];
    nlohmann::json body = nlohmann::json::parse(request.body);
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["prompt"], "prompt number " + std::to_string(index));
    EXPECT_EQ(body["max_tokens"], 4);
    EXPECT_EQ(body["stream_options"]["continuous_usage_stats"], true);
  }
  EXPECT_EQ(seen, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}}));
}

TEST_P(ClientRun, ChatStreamCountsTheRoleChunk) {
  ScriptServer server([](const Request&) {
    return testing::sse_reply({
        R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
        R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" Hello"},"logprobs":null,"finish_reason":null}]})",
        R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":"stop"}]})",
        R"({"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":7,"total_tokens":9,"completion_tokens":2}})",
        "[DONE]",
    });
  });
  Endpoint endpoint = endpoint_for(server);
  endpoint.url = server.url("/v1/chat/completions");
  endpoint.api = Api::kChatCompletions;
  RunResult result = run_plan(endpoint, body_options(), make_plan(1, 2));
  ASSERT_EQ(result.records.size(), 1u);
  const RequestRecord& r = result.records[0];
  EXPECT_TRUE(r.success) << r.error;
  EXPECT_EQ(r.chunk_ns.size(), 3u);  // the role-only first delta is a chunk, as in vLLM
  EXPECT_EQ(r.generated_text, " Hello world");
  EXPECT_EQ(r.server_completion_tokens, 2);
  EXPECT_EQ(r.client_output_tokens, -1);
  EXPECT_TRUE(r.chunk_tokens.empty());

  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/v1/chat/completions");
  nlohmann::json body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["messages"][0]["content"][0]["text"], "prompt number 0");
  EXPECT_EQ(body["max_completion_tokens"], 2);
}

TEST_P(ClientRun, WithoutUsageTheClientCountsTokens) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 3, /*usage=*/false));
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(1, 3));
  ASSERT_EQ(result.records.size(), 1u);
  const RequestRecord& r = result.records[0];
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.server_completion_tokens, -1);
  EXPECT_EQ(r.client_output_tokens, 3);
  EXPECT_EQ(r.output_tokens(), 3);
  EXPECT_TRUE(r.chunk_tokens.empty());
}

TEST_P(ClientRun, PingCommentsAreNotEvents) {
  ScriptServer server([](const Request& request) {
    Reply reply;
    reply.then(testing::sse_head()).then(testing::http_chunk(": ping\n\n"));
    for (const std::string& event : completion_events(request, 3)) {
      reply.then(testing::http_chunk("data: " + event + "\n\n"));
      reply.then(testing::http_chunk(": ping - keep-alive\n\n"));
    }
    reply.then(std::string(testing::kLastChunk));
    return reply;
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(2, 3));
  expect_one_record_each(result, 2);
  for (const RequestRecord& r : result.records) {
    EXPECT_TRUE(r.success) << r.error;
    EXPECT_EQ(r.chunk_ns.size(), 3u);
    EXPECT_EQ(r.generated_text, expected_text(3));
  }
  EXPECT_EQ(result.stats.sse_events, 2u * 5u);  // 3 tokens, usage, [DONE]; no comments
}

// --- run: failures are records

TEST_P(ClientRun, HttpErrorsCarryTheServerMessage) {
  ScriptServer server([](const Request& request) {
    switch (request_index(request)) {
      case 0:
        return testing::json_reply(
            500, R"({"error":{"message":"boom: engine failed","type":"InternalServerError"}})");
      case 1:  // vLLM's own error shape
        return testing::json_reply(
            429,
            R"({"object":"error","message":"Too many requests","type":"TooManyRequests","param":null,"code":429})");
      case 2:
        return testing::json_reply(404, R"({"detail":"Not Found"})");
      default:
        return testing::json_reply(503, "upstream unavailable\n");
    }
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(4, 4));
  expect_one_record_each(result, 4);
  const std::pair<int, std::string> expected[] = {{500, "HTTP 500: boom: engine failed"},
                                                  {429, "HTTP 429: Too many requests"},
                                                  {404, "HTTP 404: Not Found"},
                                                  {503, "HTTP 503: upstream unavailable"}};
  for (uint64_t i = 0; i < 4; ++i) {
    const RequestRecord& r = result.of(i);
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.http_status, expected[i].first);
    EXPECT_EQ(r.error, expected[i].second);
    EXPECT_EQ(r.first_token_ns, -1);
    EXPECT_TRUE(r.chunk_ns.empty());
    EXPECT_GE(r.sent_ns, 0);
    EXPECT_GE(r.done_ns, r.sent_ns);
  }
}

TEST_P(ClientRun, MidStreamCloseKeepsWhatWasMeasured) {
  ScriptServer server([](const Request& request) {
    std::vector<std::string> events = completion_events(request, 5);
    Reply reply;
    reply.then(testing::sse_head());
    for (int i = 0; i < 2; ++i) reply.then(testing::http_chunk("data: " + events[i] + "\n\n"));
    reply.then(testing::http_chunk("data: {\"choices\":[{\"te"), 20);  // cut inside an event
    reply.close = true;
    return reply;
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(1, 5));
  ASSERT_EQ(result.records.size(), 1u);
  const RequestRecord& r = result.records[0];
  EXPECT_FALSE(r.success);
  EXPECT_EQ(r.error.rfind("transport: ", 0), 0u) << r.error;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_GE(r.first_token_ns, 0);
  EXPECT_EQ(r.chunk_ns.size(), 2u);
  EXPECT_EQ(r.generated_text, expected_text(2));
  EXPECT_EQ(r.server_completion_tokens, 2);  // per-chunk usage: the client need not count
  EXPECT_EQ(r.client_output_tokens, -1);
  EXPECT_GE(r.done_ns, r.last_token_ns);
}

TEST_P(ClientRun, ErrorEventAfter200IsFailure) {
  ScriptServer server([](const Request& request) {
    std::vector<std::string> events = completion_events(request, 4);
    events.erase(events.begin() + 2, events.end());
    events.push_back(
        R"({"error":{"object":"error","message":"The engine died","type":"InternalServerError","code":500}})");
    return testing::sse_reply(events);
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(1, 4));
  ASSERT_EQ(result.records.size(), 1u);
  const RequestRecord& r = result.records[0];
  EXPECT_FALSE(r.success);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.error, "server error event: The engine died");
  EXPECT_EQ(r.chunk_ns.size(), 2u);
  EXPECT_GE(r.first_token_ns, 0);
}

TEST_P(ClientRun, EveryPlannedRequestEndsInExactlyOneRecord) {
  ScriptServer server([](const Request& request) {
    std::vector<std::string> events = completion_events(request, 3);
    switch (request_index(request) % 4) {
      case 0:
        return testing::sse_reply(events, 2);
      case 1:
        return testing::json_reply(500, openai_error("internal"));
      case 2: {
        Reply reply;
        reply.then(testing::sse_head()).then(testing::http_chunk("data: " + events[0] + "\n\n"));
        reply.close = true;
        return reply;
      }
      default:
        events.insert(events.begin() + 1, R"({"error":"stream broke"})");
        return testing::sse_reply(events);
    }
  });
  RunOptions options;
  options.max_concurrency = 3;
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(12, 3), options);
  expect_one_record_each(result, 12);
  size_t succeeded = 0, failed = 0;
  for (const RequestRecord& r : result.records) {
    SCOPED_TRACE("index " + std::to_string(r.index));
    (r.success ? succeeded : failed) += 1;
    EXPECT_GE(r.sent_ns, 0);
    switch (r.index % 4) {
      case 0:
        EXPECT_TRUE(r.success) << r.error;
        break;
      case 1:
        EXPECT_EQ(r.error, "HTTP 500: internal");
        break;
      case 2:
        EXPECT_EQ(r.error.rfind("transport: ", 0), 0u) << r.error;
        EXPECT_EQ(r.chunk_ns.size(), 1u);
        break;
      default:
        EXPECT_EQ(r.error, "server error event: stream broke");
        break;
    }
  }
  EXPECT_EQ(succeeded, 3u);
  EXPECT_EQ(failed, 9u);
  EXPECT_EQ(server.requests().size(), 12u);  // sent = completed + failed
}
// --- run: continuous usage fallback

TEST_P(ClientRun, RefusedContinuousUsageStatsIsResentWithout) {
  ScriptServer server([](const Request& request) {
    if (asked_continuous_usage(request))
      return testing::json_reply(
          400,
          R"({"object":"error","message":"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options', 'continuous_usage_stats'), 'msg': 'Extra inputs are not permitted'}]","type":"BadRequestError","param":null,"code":400})");
    return testing::sse_reply(completion_events(request, 3));
  });
  RunOptions options;
  options.max_concurrency = 1;
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(3, 3), options);
  expect_one_record_each(result, 3);
  for (const RequestRecord& r : result.records) {
    EXPECT_TRUE(r.success) << r.error;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.chunk_ns.size(), 3u);
    EXPECT_TRUE(r.chunk_tokens.empty());  // no per-chunk usage without the option
    EXPECT_EQ(r.server_completion_tokens, 3);
  }
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);  // the refused one, its resend, then two without asking
  EXPECT_TRUE(asked_continuous_usage(requests[0]));
  EXPECT_EQ(request_index(requests[0]), request_index(requests[1]));
  for (size_t i = 1; i < requests.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(requests[i].body.find("continuous_usage_stats"), std::string::npos);
    nlohmann::json body = nlohmann::json::parse(requests[i].body);  // still valid JSON
    EXPECT_EQ(body["stream_options"], nlohmann::json::parse(R"({"include_usage":true})"));
  }
}

TEST_P(ClientRun, OtherBadRequestsAreNotResent) {
  ScriptServer server([](const Request&) {
    return testing::json_reply(400, openai_error("max_tokens is too large"));
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(2, 3));
  expect_one_record_each(result, 2);
  for (const RequestRecord& r : result.records) {
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.error, "HTTP 400: max_tokens is too large");
  }
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const Request& request : requests) EXPECT_TRUE(asked_continuous_usage(request));
}
// --- secrets

TEST_P(ClientRun, ApiKeyIsSentButNeverRecorded) {
  ScriptServer server([](const Request& request) {
    std::string auth = request.header("authorization");
    switch (request_index(request)) {
      case 0:
        return testing::sse_reply(completion_events(request, 2));
      case 1:  // a server that echoes the header it refused
        return testing::json_reply(401, openai_error("invalid credentials: " + auth));
      default: {
        std::vector<std::string> events = completion_events(request, 2);
        events.insert(events.begin(), R"({"error":"bad token )" + auth + R"("})");
        return testing::sse_reply(events);
      }
    }
  });
  Endpoint endpoint = endpoint_for(server);
  endpoint.api_key = kApiKey;
  // The request's own x-request-id replaces one given as a header, as in vLLM.
  endpoint.headers = {"X-Custom: yes", "X-Request-Id: mine"};
  RunResult result = run_plan(endpoint, body_options(), make_plan(3, 2));
  expect_one_record_each(result, 3);
  EXPECT_TRUE(result.of(0).success);
  EXPECT_EQ(result.of(1).http_status, 401);
  EXPECT_EQ(result.of(1).error.rfind("HTTP 401: invalid credentials: ", 0), 0u);
  EXPECT_EQ(result.of(2).error.rfind("server error event: bad token ", 0), 0u);
  for (const RequestRecord& r : result.records) {
    EXPECT_EQ(r.error.find("0123456789abcdef"), std::string::npos) << r.error;
    EXPECT_EQ(record::to_json_line(r).find("0123456789abcdef"), std::string::npos);
  }
  for (const Request& request : server.requests()) {
    EXPECT_EQ(request.header("authorization"), std::string("Bearer ") + kApiKey);
    EXPECT_EQ(request.header("x-custom"), "yes");
    EXPECT_EQ(request.header("x-request-id").rfind("req-", 0), 0u)
        << request.header("x-request-id");
    EXPECT_EQ(request.header("x-request-id").find("mine"), std::string::npos);
  }
}

TEST_P(ClientRun, StatsSayWhereChunkTimesCameFrom) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 3), /*delay_ms=*/2);
  });
  for (bool kernel : {true, false}) {
    SCOPED_TRACE(kernel ? "kernel asked" : "read asked");
    RunOptions options;
    options.kernel_arrival_times = kernel;
    RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(4, 3), options);
    expect_one_record_each(result, 4);
    const ClientStats& stats = result.stats;
    if (kernel && current_engine == HttpEngine::kHttp1) {
      // "mixed" when a segment arrived unstamped: other processes switching the kernel's
      // stamping off and on (arrival_clock_test.cpp says more).
      EXPECT_EQ(stats.arrival_clock, stats.reads_stamped_at_read == 0 ? "kernel" : "mixed");
      EXPECT_GT(stats.kernel_stamped_reads, stats.reads_stamped_at_read);
      EXPECT_GE(stats.kernel_stamped_reads + stats.reads_stamped_at_read, 4u);
      EXPECT_GE(stats.read_delay_max_ns, stats.read_delay_p99_ns);
      EXPECT_GE(stats.read_delay_p99_ns, stats.read_delay_p50_ns);
    } else {  // libcurl reads for itself; or the user asked for read times
      EXPECT_EQ(stats.arrival_clock, "read");
      EXPECT_EQ(stats.kernel_stamped_reads, 0u);
      EXPECT_GE(stats.reads_stamped_at_read, 4u);
      EXPECT_EQ(stats.read_delay_max_ns, 0);
    }
    for (const RequestRecord& r : result.records) {
      EXPECT_TRUE(r.success) << r.error;
      EXPECT_GE(r.first_byte_ns, r.sent_ns);
      EXPECT_TRUE(std::is_sorted(r.chunk_ns.begin(), r.chunk_ns.end()));
      EXPECT_GE(r.done_ns, r.last_token_ns);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientRun,
                         ::testing::Values(HttpEngine::kCurl, HttpEngine::kHttp1), engine_name);

TEST(HttpErrorMessage, ShapesOfErrorBodies) {
  using detail::http_error_message;
  EXPECT_EQ(http_error_message(500, R"({"error":{"message":"m1"}})"), "HTTP 500: m1");
  EXPECT_EQ(http_error_message(400, R"({"error":"m2"})"), "HTTP 400: m2");
  EXPECT_EQ(http_error_message(400, R"({"object":"error","message":"m3"})"), "HTTP 400: m3");
  EXPECT_EQ(http_error_message(422, R"({"detail":[{"msg":"x"}]})"), R"(HTTP 422: [{"msg":"x"}])");
  EXPECT_EQ(http_error_message(502, "<html>\n<b>Bad gateway</b>\n</html>"),
            "HTTP 502: <html> <b>Bad gateway</b> </html>");
  EXPECT_EQ(http_error_message(503, ""), "HTTP 503");
  std::string message =
      http_error_message(401, R"({"error":{"message":"bad Bearer sk-abcdefghijklmnopqrst"}})");
  EXPECT_EQ(message.find("abcdefghijklmnopqrst"), std::string::npos) << message;
  EXPECT_LE(http_error_message(500, std::string(5000, 'z')).size(), 220u);
}

// --- wait_until_ready

TEST(WaitUntilReady, ReturnsOnA200Stream) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 1)); });
  Endpoint endpoint = endpoint_for(server);
  endpoint.api_key = kApiKey;
  EXPECT_NO_THROW(wait_until_ready(endpoint, 10));
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  nlohmann::json body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body["max_tokens"], 1);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(requests[0].header("authorization"), std::string("Bearer ") + kApiKey);
}

TEST(WaitUntilReady, RetriesWhileTheServerIsStarting) {
  ScriptServer server([](const Request& request) {
    if (request.number < 2) return testing::json_reply(503, openai_error("loading"));
    return testing::sse_reply(completion_events(request, 1));
  });
  EXPECT_NO_THROW(wait_until_ready(endpoint_for(server), 20));
  EXPECT_EQ(server.requests().size(), 3u);
}

// A 503 or 429 with Retry-After: the next try comes no sooner than it says (seconds or an HTTP
// date), where the back-off alone would retry after 100 ms. Lower bounds only: never flaky.
TEST(WaitUntilReady, HonoursRetryAfterInSecondsAndAsAnHttpDate) {
  auto busy = [](int status, const std::string& retry_after) {
    const std::string body = openai_error("busy");
    Reply reply;
    reply.then(status_line(status) + "Retry-After: " + retry_after +
               "\r\nContent-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
    return reply;
  };
  for (const int status : {503, 429}) {
    ScriptServer server([&](const Request& request) {
      if (request.number == 0) return busy(status, "1");
      return testing::sse_reply(completion_events(request, 1));
    });
    EXPECT_NO_THROW(wait_until_ready(endpoint_for(server), 20));
    const std::vector<Request> requests = server.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_GE(requests[1].received_ns - requests[0].received_ns, 1'000'000'000) << status;
  }
  // An HTTP date 3 s ahead (whole seconds: at least 2 s from now).
  char date[64];
  const std::time_t later = std::time(nullptr) + 3;
  std::tm tm{};
  gmtime_r(&later, &tm);
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  ScriptServer dated([&](const Request& request) {
    if (request.number == 0) return busy(503, date);
    return testing::sse_reply(completion_events(request, 1));
  });
  EXPECT_NO_THROW(wait_until_ready(endpoint_for(dated), 20));
  const std::vector<Request> requests = dated.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_GE(requests[1].received_ns - requests[0].received_ns, 1'500'000'000);
}

// A Retry-After past the check's timeout is cut to it: the check ends at its timeout.
TEST(WaitUntilReady, RetryAfterIsCappedByTheTimeout) {
  ScriptServer server([](const Request&) {
    const std::string body = openai_error("busy");
    Reply reply;
    reply.then(status_line(503) + "Retry-After: 3600\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n\r\n" + body);
    return reply;
  });
  const int64_t start = core::mono_ns();
  EXPECT_THROW(wait_until_ready(endpoint_for(server), 1), core::Error);
  EXPECT_LT(seconds_since(start), 60.0);  // not the hour asked for
}

TEST(WaitUntilReady, ClientErrorThrowsAtOnceWithTheServerMessage) {
  ScriptServer server([](const Request&) {
    return testing::json_reply(
        404,
        R"({"object":"error","message":"The model `test-model` does not exist.","type":"NotFoundError","param":null,"code":404})");
  });
  int64_t start = core::mono_ns();
  try {
    wait_until_ready(endpoint_for(server), 30);
    ADD_FAILURE() << "no exception";
  } catch (const core::Error& error) {
    EXPECT_EQ(error.kind(), core::ErrorKind::kNetwork);
    EXPECT_NE(std::string(error.what()).find("HTTP 404: The model `test-model` does not exist."),
              std::string::npos)
        << error.what();
  }
  EXPECT_LT(seconds_since(start), 10.0);  // not the 30 s timeout
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST(WaitUntilReady, UnusableStreamIsRetriedThenNamedWhenTheTimeoutEnds) {
  ScriptServer server([](const Request&) { return testing::sse_reply({"[DONE]"}); });
  try {
    wait_until_ready(endpoint_for(server), 0.5);
    ADD_FAILURE() << "no exception";
  } catch (const core::Error& error) {
    EXPECT_NE(std::string(error.what()).find("not usable"), std::string::npos) << error.what();
  }
  EXPECT_GE(server.requests().size(), 2u);
}

TEST(WaitUntilReady, ThrowsAfterTheTimeoutWhenNothingListens) {
  Endpoint endpoint;
  endpoint.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/completions";
  endpoint.model = "m";
  int64_t start = core::mono_ns();
  try {
    wait_until_ready(endpoint, 0.5);
    ADD_FAILURE() << "no exception";
  } catch (const core::Error& error) {
    EXPECT_EQ(error.kind(), core::ErrorKind::kNetwork);
    std::string what = error.what();
    EXPECT_NE(what.find("did not become ready within 0.5 s"), std::string::npos) << what;
    EXPECT_NE(what.find("transport: "), std::string::npos) << what;
  }
  double elapsed = seconds_since(start);
  EXPECT_GE(elapsed, 0.5);
  EXPECT_LT(elapsed, 10.0);
}

TEST(WaitUntilReady, KeepsTryingOnServerErrorsUntilTheTimeout) {
  ScriptServer server(
      [](const Request&) { return testing::json_reply(503, openai_error("still loading")); });
  try {
    wait_until_ready(endpoint_for(server), 0.5);
    ADD_FAILURE() << "no exception";
  } catch (const core::Error& error) {
    EXPECT_NE(std::string(error.what()).find("last failure: HTTP 503: still loading"),
              std::string::npos)
        << error.what();
  }
  EXPECT_GE(server.requests().size(), 2u);
}

TEST(WaitUntilReady, PerRequestTimeoutBoundsEachAttempt) {
  // A server that accepts and never answers: each attempt ends at the endpoint's timeout.
  ScriptServer server([](const Request&) {
    Reply reply;
    reply.then(testing::status_line(200), 60'000);
    return reply;
  });
  Endpoint endpoint = endpoint_for(server);
  endpoint.timeout_s = 0.2;
  int64_t start = core::mono_ns();
  EXPECT_THROW(wait_until_ready(endpoint, 0.5), core::Error);
  EXPECT_LT(seconds_since(start), 4.0);  // not a 5 s attempt
  EXPECT_GE(server.requests().size(), 2u);
}

}  // namespace
}  // namespace servebench::client::testing
