// Tokens leave when the schedule says: the TokenSchedule on its own (made-up threads, a sink
// that records), then through the server: fixed TTFT and ITL, the shared engine across I/O
// threads, many streams on several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/server_test_client.h"
#include "sim/token_schedule.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

struct RecordingSink final : detail::TokenSink {
  std::vector<TokenEvent> got;
  void on_tokens_due(const TokenEvent* events, size_t count) override {
    got.insert(got.end(), events, events + count);
  }
};

TEST(TokenSchedule, FixedModelDeliversEachTokenOnceDueToTheOwningThread) {
  Options o;
  o.fixed.ttft = {2, 0};
  o.fixed.itl = {1, 0};
  boost::asio::io_context ioc;
  RecordingSink sink;
  auto schedule = detail::make_model_schedule(o, {{&ioc, &sink}});
  const uint64_t id = detail::make_request_id(0, 1);
  const int64_t arrival = core::mono_ns();
  EXPECT_EQ(schedule->submit(id, RequestShape{4, 3}, arrival), "");
  while (sink.got.size() < 3 && ioc.run_one_for(std::chrono::seconds(5))) {
  }
  ASSERT_EQ(sink.got.size(), 3u);
  for (int32_t k = 0; k < 3; ++k) {
    const TokenEvent& ev = sink.got[static_cast<size_t>(k)];
    EXPECT_EQ(ev.request_id, id);
    EXPECT_EQ(ev.token_index, k);
    EXPECT_EQ(ev.last, k == 2);
    EXPECT_GE(ev.due_ns, arrival + 2'000'000 + k * 1'000'000);
  }
  EXPECT_GE(core::mono_ns(), sink.got[2].due_ns);
  schedule->stop(0);
}

TEST(TokenSchedule, EngineHandsTokensToTheOwningThreadAndRefusesWhatCanNeverFit) {
  Options o;
  o.mode = Options::Mode::kEngine;
  o.engine.block_size = 16;
  o.engine.num_gpu_blocks = 4;  // 64 tokens of KV cache
  boost::asio::io_context ioc0, ioc1;
  RecordingSink sink0, sink1;
  auto schedule = detail::make_model_schedule(o, {{&ioc0, &sink0}, {&ioc1, &sink1}});
  // Polled by hand below: without work guards an idle poll() would stop them.
  auto guard0 = boost::asio::make_work_guard(ioc0);
  auto guard1 = boost::asio::make_work_guard(ioc1);
  EXPECT_NE(schedule->submit(detail::make_request_id(0, 1), RequestShape{100, 1}, core::mono_ns()),
            "");
  const uint64_t id = detail::make_request_id(1, 1);
  EXPECT_EQ(schedule->submit(id, RequestShape{8, 2}, core::mono_ns()), "");
  EXPECT_EQ(schedule->stats().running + schedule->stats().waiting, 1);
  const int64_t give_up = core::mono_ns() + 5'000'000'000;
  while (sink1.got.size() < 2 && core::mono_ns() < give_up) {
    ioc0.poll();  // the driving thread: the engine's timer
    ioc1.poll();  // the owning thread: the posted batches
  }
  EXPECT_TRUE(sink0.got.empty());
  ASSERT_EQ(sink1.got.size(), 2u);
  EXPECT_EQ(sink1.got[0].request_id, id);
  EXPECT_FALSE(sink1.got[0].last);
  EXPECT_TRUE(sink1.got[1].last);
  EXPECT_EQ(schedule->stats().running + schedule->stats().waiting, 0);
  schedule->stop(0);
}

TEST(SimServerTiming, FixedTtftAndItlHoldWithinTolerance) {
  Options o = fast_options();
  o.fixed.ttft = {50, 0};
  o.fixed.itl = {10, 0};
  Server s(o);
  s.start();
  RawClient c(s.port());
  int64_t t0 = core::mono_ns();
  Response r = c.request("POST", "/v1/completions", completion_body(11, true));
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.chunk_ns.size(), 12u);
  double ttft_ms = (r.chunk_ns[0] - t0) / 1e6;
  EXPECT_NEAR(ttft_ms, 50, 25);
  double itl_ms = (r.chunk_ns[10] - r.chunk_ns[0]) / 1e6 / 10;
  EXPECT_NEAR(itl_ms, 10, 5);
}

TEST(SimServerEngine, EngineModeStreamsExactCounts) {
  Options o = fast_options();
  o.mode = Options::Mode::kEngine;
  o.threads = 2;
  Server s(o);
  s.start();
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      RawClient c(s.port());
      Response r = c.request("POST", "/v1/completions", completion_body(8, true));
      if (r.status == 200 && r.complete && r.events().size() == 9) ++good;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(good.load(), 4);
}

TEST(SimServerThreads, ManyConcurrentStreamsAcrossThreads) {
  Options o = fast_options();
  o.threads = 2;
  o.fixed.itl = {2, 0};
  Server s(o);
  s.start();
  std::vector<std::unique_ptr<RawClient>> cs;
  for (int i = 0; i < 64; ++i) {
    cs.push_back(std::make_unique<RawClient>(s.port()));
    cs.back()->send_request("POST", "/v1/completions", completion_body(20, true));
  }
  int good = 0;
  for (auto& c : cs) {
    Response r = c->read_response();
    if (r.status == 200 && r.complete && r.events().size() == 21) ++good;
  }
  EXPECT_EQ(good, 64);
}

}  // namespace
}  // namespace servebench::sim
