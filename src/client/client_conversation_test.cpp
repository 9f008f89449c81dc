// client::run with multi-turn conversations: later turns go after the previous answer, with the
// history; failures and stops leave the rest unsent.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/testing/client_runs.h"
#include "client/testing/script_server.h"
#include "core/error.h"

namespace servebench::client::testing {
namespace {

using record::RequestRecord;

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

}  // namespace
}  // namespace servebench::client::testing
