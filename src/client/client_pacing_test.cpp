// client::run's pacing and concurrency, record delivery, stop, drain and abort, the t0 gate.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/testing/client_runs.h"
#include "client/testing/script_server.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::testing {
namespace {

using record::RequestRecord;

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

}  // namespace
}  // namespace servebench::client::testing
