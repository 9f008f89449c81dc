// client::run and client::wait_until_ready against a scripted HTTP/1.1 server on loopback.
#include "client/client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/event_loop.h"
#include "client/testing/script_server.h"
#include "core/clock.h"
#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::client {
namespace {

using record::RequestRecord;
using testing::Reply;
using testing::Request;
using testing::ScriptServer;

constexpr int kPromptTokens = 5;
constexpr const char* kApiKey = "sk-test0123456789abcdefSECRET";

const tokenizer::Tokenizer& word_tokenizer() {
  static const std::unique_ptr<tokenizer::Tokenizer> tokenizer = tokenizer::make_word_tokenizer();
  return *tokenizer;
}

double seconds_since(int64_t start_ns) {
  return static_cast<double>(core::mono_ns() - start_ns) * 1e-9;
}

bool asked_continuous_usage(const Request& request) {
  return request.body.find(R"("continuous_usage_stats":true)") != std::string::npos;
}

// The plan index a request carries in its x-request-id ("req-<index>").
int request_index(const Request& request) {
  std::string id = request.header("x-request-id");
  return id.rfind("req-", 0) == 0 ? std::stoi(id.substr(4)) : -1;
}

std::string usage_json(int completion_tokens) {
  return R"({"prompt_tokens":)" + std::to_string(kPromptTokens) + R"(,"total_tokens":)" +
         std::to_string(kPromptTokens + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + "}";
}

// vLLM's completions stream of `tokens` words " w1 w2 …": usage in every chunk when asked for
// (and `usage` is true), a final usage-only chunk, then [DONE].
std::vector<std::string> completion_events(const Request& request, int tokens, bool usage = true) {
  bool continuous = usage && asked_continuous_usage(request);
  std::vector<std::string> events;
  for (int i = 1; i <= tokens; ++i) {
    std::string event = R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m",)"
                        R"("choices":[{"index":0,"text":" w)" +
                        std::to_string(i) + R"(","logprobs":null,"finish_reason":)" +
                        (i == tokens ? "\"length\"" : "null") + "}]";
    if (continuous) event += R"(,"usage":)" + usage_json(i);
    events.push_back(event + "}");
  }
  if (usage)
    events.push_back(R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m",)"
                     R"("choices":[],"usage":)" +
                     usage_json(tokens) + "}");
  events.push_back("[DONE]");
  return events;
}

std::string expected_text(int tokens) {
  std::string text;
  for (int i = 1; i <= tokens; ++i) text += " w" + std::to_string(i);
  return text;
}

std::string openai_error(const std::string& message) {
  return R"({"error":{"message":")" + message +
         R"(","type":"BadRequestError","param":null,"code":null}})";
}

Endpoint endpoint_for(const ScriptServer& server) {
  Endpoint endpoint;
  endpoint.url = server.url("/v1/completions");
  endpoint.model = "test-model";
  endpoint.timeout_s = 30;
  return endpoint;
}

BodyOptions body_options() {
  BodyOptions body;
  body.request_id_prefix = "req-";
  return body;
}

std::vector<PlannedRequest> make_plan(int count, int32_t max_tokens, int64_t spacing_ns = 0) {
  std::vector<PlannedRequest> plan;
  for (int i = 0; i < count; ++i) {
    PlannedRequest request;
    request.index = static_cast<uint64_t>(i);
    request.intended_ns = i * spacing_ns;
    request.prompt = "prompt number " + std::to_string(i);
    request.prompt_tokens = 3;
    request.max_tokens = max_tokens;
    plan.push_back(request);
  }
  return plan;
}

struct RunResult {
  ClientStats stats;
  std::vector<RequestRecord> records;  // in delivery order
  bool sink_on_caller_thread = false;  // some call from the thread that called run()
  int sink_calls_at_once = 0;          // most calls in progress together
  // Calls from the delivering thread (nice 19 or SCHED_IDLE), the others from event loops.
  size_t sink_calls_yielding = 0;

  // The record of plan index `index` (fails the test when there is not exactly one).
  const RequestRecord& of(uint64_t index) const {
    const RequestRecord* found = nullptr;
    int count = 0;
    for (const RequestRecord& r : records) {
      if (r.index == index) {
        found = &r;
        ++count;
      }
    }
    EXPECT_EQ(count, 1) << "records for index " << index;
    static const RequestRecord kNone;
    return found != nullptr ? *found : kNone;
  }
};

// Every ClientRun test runs once per transport: libcurl's and servebench's own HTTP/1.1.
HttpEngine current_engine = HttpEngine::kCurl;

class ClientRun : public ::testing::TestWithParam<HttpEngine> {
 protected:
  void SetUp() override { current_engine = GetParam(); }
};

std::string engine_name(const ::testing::TestParamInfo<HttpEngine>& info) {
  return info.param == HttpEngine::kCurl ? "curl" : "http1";
}

RunResult run_plan(const Endpoint& endpoint, const BodyOptions& body,
                   const std::vector<PlannedRequest>& plan, const RunOptions& given = {},
                   const std::function<void(const RequestRecord&)>& on_record = {}) {
  RunOptions options = given;
  options.http_engine = current_engine;
  RunResult result;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> in_sink{0};
  result.stats = run(endpoint, body, plan, options, word_tokenizer(), [&](RequestRecord&& r) {
    int at_once = ++in_sink;
    result.sink_calls_at_once = std::max(result.sink_calls_at_once, at_once);
    if (std::this_thread::get_id() == caller) result.sink_on_caller_thread = true;
    if (sched_getscheduler(0) == SCHED_IDLE ||
        getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == 19)
      ++result.sink_calls_yielding;
    --in_sink;
    if (on_record) on_record(r);
    result.records.push_back(std::move(r));
  });
  return result;
}

// One record per planned index, nothing else.
void expect_one_record_each(const RunResult& result, size_t plan_size) {
  ASSERT_EQ(result.records.size(), plan_size);
  std::vector<uint64_t> indices;
  for (const RequestRecord& r : result.records) indices.push_back(r.index);
  std::sort(indices.begin(), indices.end());
  for (size_t i = 0; i < plan_size; ++i) EXPECT_EQ(indices[i], i);
}

// A loopback port nothing listens on.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

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

// --- run: multi-turn conversations

// `conversations` conversations of `turns` turns each, conversation-major: index c*turns + t is
// turn t of conversation c; first turns all due at 0.
std::vector<PlannedRequest> conversation_plan(int conversations, int turns, int32_t max_tokens) {
  std::vector<PlannedRequest> plan = make_plan(conversations * turns, max_tokens);
  for (PlannedRequest& request : plan) {
    int i = static_cast<int>(request.index);
    request.intended_ns = 0;
    request.conversation = i / turns;
    request.turn = i % turns;
    request.follows = request.turn > 0 ? i - 1 : -1;
  }
  return plan;
}

// A chat stream whose text names the request: " answer <index>" in two chunks, 20 ms apart.
Reply chat_answer(const Request& request) {
  std::string index = std::to_string(request_index(request));
  auto delta = [](const std::string& content, const char* finish) {
    return R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":")" +
           content + R"("},"logprobs":null,"finish_reason":)" + finish + "}]}";
  };
  return testing::sse_reply(
      {delta(" answer", "null"), delta(" " + index, "\"stop\""),
       R"({"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9,"total_tokens":11,"completion_tokens":2}})",
       "[DONE]"},
      /*delay_ms=*/20);
}

TEST_P(ClientRun, ConversationTurnsGoAfterThePreviousAnswerWithTheHistory) {
  for (int io_threads : {1, 2}) {
    SCOPED_TRACE("io_threads " + std::to_string(io_threads));
    ScriptServer server(chat_answer);
    Endpoint endpoint = endpoint_for(server);
    endpoint.url = server.url("/v1/chat/completions");
    endpoint.api = Api::kChatCompletions;
    RunOptions options;
    options.io_threads = io_threads;
    std::vector<PlannedRequest> plan = conversation_plan(2, 3, 2);
    RunResult result = run_plan(endpoint, body_options(), plan, options);
    expect_one_record_each(result, 6);
    for (const RequestRecord& r : result.records) {
      SCOPED_TRACE("index " + std::to_string(r.index));
      EXPECT_TRUE(r.success) << r.error;
      EXPECT_EQ(r.generated_text, " answer " + std::to_string(r.index));
      EXPECT_EQ(r.conversation, static_cast<int64_t>(r.index / 3));
      EXPECT_EQ(r.turn, static_cast<int32_t>(r.index % 3));
      if (r.turn == 0) {
        EXPECT_EQ(r.intended_ns, 0);
        EXPECT_EQ(r.prompt_tokens, 3);
        continue;
      }
      const RequestRecord& previous = result.of(r.index - 1);
      // Due when the previous answer ended, and not sent before.
      EXPECT_EQ(r.intended_ns, previous.done_ns);
      EXPECT_GE(r.sent_ns, previous.done_ns);
      // The client's estimate: the previous prompt with its history, its answer, this prompt.
      EXPECT_EQ(r.prompt_tokens, previous.prompt_tokens + 2 + 3);
    }

    std::vector<Request> requests = server.requests();
    ASSERT_EQ(requests.size(), 6u);
    std::map<int, Request> by_index;
    for (const Request& request : requests) by_index[request_index(request)] = request;
    for (int i = 0; i < 6; ++i) {
      SCOPED_TRACE("index " + std::to_string(i));
      ASSERT_EQ(by_index.count(i), 1u);
      int turn = i % 3;
      if (turn > 0) {  // the server had finished the previous answer before this arrived
        EXPECT_GE(by_index[i].received_ns - result.stats.t0_mono_ns, result.of(i - 1).done_ns);
      }
      nlohmann::json messages = nlohmann::json::parse(by_index[i].body)["messages"];
      ASSERT_EQ(messages.size(), static_cast<size_t>(2 * turn + 1));
      for (int t = 0; t <= turn; ++t) {
        int index = i - turn + t;
        EXPECT_EQ(messages[2 * t]["role"], "user");
        EXPECT_EQ(messages[2 * t]["content"][0]["text"], "prompt number " + std::to_string(index));
        if (t < turn) {
          EXPECT_EQ(messages[2 * t + 1]["role"], "assistant");
          EXPECT_EQ(messages[2 * t + 1]["content"], " answer " + std::to_string(index));
        }
      }
    }
  }
}

TEST_P(ClientRun, AFailedTurnLeavesTheRestOfItsConversationUnsent) {
  ScriptServer server([](const Request& request) {
    if (request_index(request) == 1) return testing::json_reply(500, openai_error("overloaded"));
    return testing::sse_reply(completion_events(request, 2));
  });
  std::vector<PlannedRequest> plan = conversation_plan(2, 3, 2);
  RunOptions options;
  options.max_concurrency = 1;
  RunResult result = run_plan(endpoint_for(server), body_options(), plan, options);
  expect_one_record_each(result, 6);
  EXPECT_TRUE(result.of(0).success);
  EXPECT_EQ(result.of(1).error, "HTTP 500: overloaded");
  const RequestRecord& unsent = result.of(2);
  EXPECT_FALSE(unsent.success);
  EXPECT_EQ(unsent.error, "not sent: previous turn failed");
  EXPECT_EQ(unsent.sent_ns, -1);
  EXPECT_EQ(unsent.intended_ns, -1);  // never due
  EXPECT_EQ(unsent.conversation, 0);
  EXPECT_EQ(unsent.turn, 2);
  for (uint64_t i = 3; i < 6; ++i) EXPECT_TRUE(result.of(i).success) << result.of(i).error;

  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 5u);  // index 2 never went out
  for (const Request& request : requests) {
    EXPECT_NE(request_index(request), 2);
    if (request_index(request) == 5) {  // completions: earlier prompts and answers, then this
      EXPECT_EQ(nlohmann::json::parse(request.body)["prompt"],
                "prompt number 3" + expected_text(2) + "\n\nprompt number 4" + expected_text(2) +
                    "\n\nprompt number 5");
    }
  }
}

TEST_P(ClientRun, MaxActiveConversationsHoldsFirstTurns) {
  for (int io_threads : {1, 2}) {
    SCOPED_TRACE("io_threads " + std::to_string(io_threads));
    ScriptServer server([](const Request& request) {
      return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/10);
    });
    RunOptions options;
    options.max_active_conversations = 1;
    options.io_threads = io_threads;
    RunResult result =
        run_plan(endpoint_for(server), body_options(), conversation_plan(3, 2, 2), options);
    expect_one_record_each(result, 6);
    // One conversation at a time: each begins after the one before it ended.
    std::vector<std::pair<int64_t, int64_t>> spans;  // first sent, last done
    for (int c = 0; c < 3; ++c) {
      const RequestRecord& first = result.of(static_cast<uint64_t>(2 * c));
      const RequestRecord& last = result.of(static_cast<uint64_t>(2 * c + 1));
      EXPECT_TRUE(first.success && last.success);
      EXPECT_EQ(first.intended_ns, 0);  // held, keeping its intended time
      spans.emplace_back(first.sent_ns, last.done_ns);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_GE(spans[i].first, spans[i - 1].second);
    EXPECT_EQ(server.max_open_requests(), 1);
  }
}

TEST_P(ClientRun, StopLeavesLaterTurnsUnsent) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/50);
  });
  std::atomic<bool> stop{false};
  RunOptions options;
  options.stop = &stop;
  RunResult result = run_plan(endpoint_for(server), body_options(), conversation_plan(1, 3, 2),
                              options, [&](const RequestRecord&) { stop.store(true); });
  expect_one_record_each(result, 3);
  EXPECT_TRUE(result.of(0).success);
  // Turn 1 went out before the stop was seen (then drained) or was left unsent; turn 2 never.
  const RequestRecord& second = result.of(1);
  if (!second.success) {
    EXPECT_EQ(second.error, "not sent: stopped");
  }
  EXPECT_EQ(result.of(2).error, "not sent: stopped");
  EXPECT_EQ(result.of(2).sent_ns, -1);
  EXPECT_LE(server.requests().size(), 2u);
}

TEST_P(ClientRun, ATurnWithoutItsPreviousTurnIsRefusedBeforeSending) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  std::vector<PlannedRequest> plan = conversation_plan(1, 2, 2);
  plan[1].follows = 7;  // no such request
  EXPECT_THROW(run_plan(endpoint_for(server), body_options(), plan), core::Error);
  EXPECT_TRUE(server.requests().empty());
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

// --- run: pacing and concurrency

TEST_P(ClientRun, MaxConcurrencyIsNeverExceeded) {
  for (int io_threads : {1, 2}) {
    SCOPED_TRACE("io_threads " + std::to_string(io_threads));
    ScriptServer server([](const Request& request) {
      return testing::sse_reply(completion_events(request, 3), /*delay_ms=*/30);
    });
    RunOptions options;
    options.max_concurrency = 2;
    options.io_threads = io_threads;
    RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(6, 3), options);
    expect_one_record_each(result, 6);
    for (const RequestRecord& r : result.records) EXPECT_TRUE(r.success) << r.error;
    EXPECT_EQ(server.max_open_requests(), 2);
  }
}

// after_records follows every batch of sink calls, never while the sink runs, and the last one
// comes after the last record (a caller that buffers records writes them all out).
TEST_P(ClientRun, AfterRecordsFollowsEachBatchAndTheLastRecord) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/5);
  });
  std::vector<PlannedRequest> plan = make_plan(40, 2);
  for (size_t i = 0; i < plan.size(); ++i)
    plan[i].intended_ns = static_cast<int64_t>(i % 4) * 20'000'000;  // four waves
  std::atomic<int> delivered{0};
  std::vector<int> delivered_at_each_call;
  // The sink may run on a loop (its idle time) or the delivering thread, the hook on the
  // delivering thread: never two at once.
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  auto enter = [&] {
    if (inside.fetch_add(1) != 0) overlapped = true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // room for an overlap
  };
  RunOptions options;
  options.after_records = [&] {
    enter();
    delivered_at_each_call.push_back(delivered.load());
    --inside;
  };
  RunResult result =
      run_plan(endpoint_for(server), body_options(), plan, options, [&](const RequestRecord&) {
        enter();
        ++delivered;
        --inside;
      });
  expect_one_record_each(result, 40);
  ASSERT_GE(delivered_at_each_call.size(), 2u);  // the waves are 20 ms apart
  for (size_t i = 1; i < delivered_at_each_call.size(); ++i)
    EXPECT_GT(delivered_at_each_call[i], delivered_at_each_call[i - 1]);  // no empty batch
  EXPECT_EQ(delivered_at_each_call.back(), 40);
  EXPECT_FALSE(overlapped.load());
}

TEST_P(ClientRun, LoopsDeliverRecordsInTheirIdleTime) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/1);
  });
  // Each record is done ~4 ms before the next send: its loop delivers it while it waits (http1:
  // as soon as nothing is left to read; curl: in the spin before the send). The delivering
  // thread takes only what the loops leave for 2 ms, and the last record.
  std::vector<PlannedRequest> plan = make_plan(12, 2, /*spacing_ns=*/5'000'000);
  RunResult result = run_plan(endpoint_for(server), body_options(), plan);
  expect_one_record_each(result, 12);
  EXPECT_GE(result.sink_calls_yielding, 1u);  // the last one at least
  EXPECT_GE(result.records.size() - result.sink_calls_yielding, 1u);
  EXPECT_EQ(result.sink_calls_at_once, 1);
}

// Two loops, each delivering in its idle time, and the delivering thread: one sink call at a
// time, every record once.
TEST_P(ClientRun, LoopsTakeTurnsAtTheSink) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 2), /*delay_ms=*/1);
  });
  std::vector<PlannedRequest> plan = make_plan(40, 2, /*spacing_ns=*/1'000'000);
  RunOptions options;
  options.http_engine = GetParam();
  options.io_threads = 2;
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  std::vector<uint64_t> delivered;
  run(endpoint_for(server), body_options(), plan, options, word_tokenizer(),
      [&](RequestRecord&& r) {
        if (inside.fetch_add(1) != 0) overlapped = true;
        std::this_thread::sleep_for(std::chrono::microseconds(300));  // room for an overlap
        delivered.push_back(r.index);
        --inside;
      });
  EXPECT_FALSE(overlapped.load());
  std::sort(delivered.begin(), delivered.end());
  ASSERT_EQ(delivered.size(), 40u);
  for (size_t i = 0; i < delivered.size(); ++i) EXPECT_EQ(delivered[i], i);
}

TEST_P(ClientRun, UnlimitedConcurrencySendsEverythingAtOnce) {
  ScriptServer server([](const Request& request) {
    return testing::sse_reply(completion_events(request, 3), /*delay_ms=*/100);
  });
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(5, 3));
  expect_one_record_each(result, 5);
  EXPECT_EQ(server.max_open_requests(), 5);
  EXPECT_EQ(server.connections_accepted(), 5);
  EXPECT_EQ(result.stats.connections_opened, 5u);
}

TEST_P(ClientRun, IntendedSendTimesAreHonoured) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  constexpr int64_t kSpacingNs = 100'000'000;
  std::vector<PlannedRequest> plan = make_plan(4, 2, kSpacingNs);
  RunResult result = run_plan(endpoint_for(server), body_options(), plan);
  expect_one_record_each(result, 4);
  for (const RequestRecord& r : result.records) {
    SCOPED_TRACE("index " + std::to_string(r.index));
    EXPECT_TRUE(r.success);
    EXPECT_EQ(r.intended_ns, static_cast<int64_t>(r.index) * kSpacingNs);
    EXPECT_GE(r.sent_ns, r.intended_ns);                  // never early
    EXPECT_LT(r.sent_ns, r.intended_ns + 1'000'000'000);  // and not wildly late
  }
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  for (const Request& request : requests) {
    int index = request_index(request);
    EXPECT_EQ(static_cast<size_t>(index), request.number);  // arrived in plan order
    EXPECT_GE(request.received_ns - result.stats.t0_mono_ns, index * kSpacingNs);
  }
}

TEST_P(ClientRun, KeepAliveReusesOneConnection) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  RunOptions options;
  options.max_concurrency = 1;
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(5, 2), options);
  expect_one_record_each(result, 5);
  for (const RequestRecord& r : result.records) EXPECT_TRUE(r.success) << r.error;
  EXPECT_EQ(result.stats.connections_opened, 1u);
  EXPECT_EQ(server.connections_accepted(), 1);
  for (const Request& request : server.requests()) EXPECT_EQ(request.connection, 1);
}

TEST_P(ClientRun, ConnectionClosedByTheServerAfterAReplyIsNotReused) {
  // Keep-alive by the headers, but the server closes after every reply: the next request must
  // go out on a fresh connection (or be sent once more on one when the close raced it).
  ScriptServer server([](const Request& request) {
    Reply reply = testing::sse_reply(completion_events(request, 2));
    reply.close = true;
    return reply;
  });
  RunOptions options;
  options.max_concurrency = 1;
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(4, 2), options);
  expect_one_record_each(result, 4);
  for (const RequestRecord& r : result.records) EXPECT_TRUE(r.success) << r.error;
  EXPECT_EQ(server.connections_accepted(), 4);
  EXPECT_EQ(server.requests().size(), 4u);  // none sent twice
}

// --- run: stop, drain, abort

TEST_P(ClientRun, StopLeavesUnsentRequestsAsRecords) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  std::vector<PlannedRequest> plan = make_plan(5, 2);
  for (size_t i = 2; i < plan.size(); ++i) plan[i].intended_ns = 60'000'000'000;  // 60 s
  std::atomic<bool> stop{false};
  RunOptions options;
  options.stop = &stop;
  int64_t start = core::mono_ns();
  RunResult result = run_plan(endpoint_for(server), body_options(), plan, options,
                              [&](const RequestRecord&) { stop.store(true); });
  EXPECT_LT(seconds_since(start), 20.0);  // did not wait for the 60 s requests
  expect_one_record_each(result, 5);
  EXPECT_TRUE(result.of(0).success);
  EXPECT_TRUE(result.of(1).success);  // in flight at the stop: drained, not cut
  for (uint64_t i = 2; i < 5; ++i) {
    const RequestRecord& r = result.of(i);
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.error, "not sent: stopped");
    EXPECT_EQ(r.sent_ns, -1);
    EXPECT_EQ(r.http_status, 0);
    EXPECT_EQ(r.request_id, "req-" + std::to_string(i));
    EXPECT_EQ(r.intended_ns, 60'000'000'000);
  }
  EXPECT_EQ(server.requests().size(), 2u);
}

TEST_P(ClientRun, StopDrainsThenAbortsWhatIsStillRunning) {
  ScriptServer server([](const Request& request) {
    std::vector<std::string> events = completion_events(request, 3);
    if (request_index(request) == 0) return testing::sse_reply(events);
    Reply reply;  // one token, then silence far longer than the drain
    reply.then(testing::sse_head()).then(testing::http_chunk("data: " + events[0] + "\n\n"));
    reply.then(testing::http_chunk("data: " + events[1] + "\n\n"), 30'000);
    return reply;
  });
  std::atomic<bool> stop{false};
  RunOptions options;
  options.stop = &stop;
  options.drain_timeout_s = 0.3;
  int64_t start = core::mono_ns();
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(2, 3), options,
                              [&](const RequestRecord&) { stop.store(true); });
  EXPECT_LT(seconds_since(start), 15.0);
  expect_one_record_each(result, 2);
  EXPECT_TRUE(result.of(0).success);
  const RequestRecord& hung = result.of(1);
  EXPECT_FALSE(hung.success);
  EXPECT_EQ(hung.error, "aborted: still running when the drain timeout after stop ended");
  EXPECT_EQ(hung.http_status, 200);
  EXPECT_GE(hung.first_token_ns, 0);  // measured before the stop, kept
  EXPECT_EQ(hung.chunk_ns.size(), 1u);
}

TEST_P(ClientRun, SinkExceptionStopsTheRunAndIsRethrown) {
  ScriptServer server([](const Request& request) {
    std::vector<std::string> events = completion_events(request, 2);
    if (request_index(request) == 0) return testing::sse_reply(events);
    return testing::sse_reply(events, /*delay_ms=*/30'000);
  });
  std::vector<PlannedRequest> plan = make_plan(3, 2);
  plan[2].intended_ns = 60'000'000'000;
  int calls = 0;
  int64_t start = core::mono_ns();
  RunOptions options;
  options.http_engine = GetParam();
  EXPECT_THROW(run(endpoint_for(server), body_options(), plan, options, word_tokenizer(),
                   [&](RequestRecord&&) {
                     ++calls;
                     throw std::runtime_error("sink full");
                   }),
               std::runtime_error);
  EXPECT_EQ(calls, 1);  // no records after the sink gave up
  EXPECT_LT(seconds_since(start), 15.0);
}

// Several runs share one t0 (cli/run_targets.cpp): the gate's time is the run's t0.
TEST_P(ClientRun, T0GateGivesTheRunItsStart) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  int gate_calls = 0;
  int64_t gate_t0 = 0;
  RunOptions options;
  options.t0_gate = [&] {
    ++gate_calls;
    gate_t0 = core::mono_ns() - 50'000'000;  // the others became ready 50 ms ago
    return gate_t0;
  };
  RunResult result = run_plan(endpoint_for(server), body_options(), make_plan(2, 2), options);
  expect_one_record_each(result, 2);
  EXPECT_EQ(gate_calls, 1);
  EXPECT_EQ(result.stats.t0_mono_ns, gate_t0);
  // Sent after the gate returned, so at least 50 ms after that t0.
  for (const RequestRecord& r : result.records) EXPECT_GE(r.sent_ns, 50'000'000);
}

TEST_P(ClientRun, T0GateThatGivesUpSendsNothing) {
  ScriptServer server(
      [](const Request& request) { return testing::sse_reply(completion_events(request, 2)); });
  RunOptions options;
  options.t0_gate = []() -> int64_t { throw std::runtime_error("another target failed"); };
  EXPECT_THROW(run_plan(endpoint_for(server), body_options(), make_plan(3, 2), options),
               std::runtime_error);
  EXPECT_EQ(server.requests().size(), 0u);
}

TEST_P(ClientRun, EmptyPlanSendsNothing) {
  ScriptServer server([](const Request&) { return testing::json_reply(500, "{}"); });
  RunResult result = run_plan(endpoint_for(server), body_options(), {});
  EXPECT_TRUE(result.records.empty());
  EXPECT_EQ(server.requests().size(), 0u);
}

TEST_P(ClientRun, BadExtraBodyThrowsBeforeSending) {
  ScriptServer server([](const Request&) { return testing::json_reply(500, "{}"); });
  BodyOptions body = body_options();
  body.extra_body_json = "[1]";
  EXPECT_THROW(run_plan(endpoint_for(server), body, make_plan(2, 2)), core::Error);
  EXPECT_EQ(server.requests().size(), 0u);
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
}  // namespace servebench::client
