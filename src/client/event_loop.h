// File: client/event_loop.h (internal to the client part)
// One event loop = one thread's share of the plan: an epoll set, a timerfd (CLOCK_MONOTONIC,
// TFD_TIMER_ABSTIME) for pacing, the request bodies built before t0, a pool of reusable
// exchanges, and a Transport (transport.h) that moves the bytes. Loops of one run share only
// RunShared: the concurrency slots and active conversations (atomics), the
// continuous_usage_stats fallback flag, and the outbox that carries finished records to the
// calling thread. A conversation's later turns are built and queued by the loop that ran the
// turn before (so all its turns live in one loop).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/arrival_clock.h"
#include "client/client.h"
#include "nlohmann/json.hpp"

namespace servebench::client::detail {

class EventLoop;

class Delivery;

struct RunShared {
  const Endpoint* endpoint = nullptr;
  const BodyOptions* body = nullptr;
  const RunOptions* options = nullptr;
  nlohmann::ordered_json extra_body;
  int concurrency_cap = 0;  // 0 = unlimited
  std::atomic<int> in_flight{0};
  int conversation_cap = 0;  // RunOptions::max_active_conversations; 0 = unlimited
  std::atomic<int> active_conversations{0};
  std::atomic<bool> usage_stats_rejected{false};  // a server refused continuous_usage_stats
  std::atomic<bool> abort{false};                 // the caller gave up (its sink threw)
  std::atomic<int64_t> t0_ns{0};
  std::vector<EventLoop*> loops;

  // Outbox: finished records for the calling thread.
  std::mutex mutex;
  std::condition_variable ready;
  // A deque: while the delivering thread waits for an idle core (a loop at full load) this can
  // hold tens of thousands of records, and a vector's regrowth moved them all, in the loop's
  // time (a 1–5 ms stall of sends and reads at 50k requests/s).
  std::deque<record::RequestRecord> finished;
  int loops_finished = 0;
  std::exception_ptr failure;  // an internal error in a loop
  // Where the loops deliver records in their idle time (delivery.h); null: the loops only queue
  // them in `finished`.
  Delivery* delivery = nullptr;
};

struct LoopStats {
  int64_t max_loop_lag_ns = 0;
  uint64_t bytes_received = 0;
  uint64_t sse_events = 0;
  uint64_t connections_opened = 0;
  // Kernel-stamped reads: how long the bytes waited in the socket for the client to read them.
  DelayHistogram read_delay;
  uint64_t reads_stamped_at_read = 0;  // reads timed by the client's clock instead
};

class EventLoop {
 public:
  EventLoop(RunShared& shared, std::vector<const PlannedRequest*> requests);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Builds bodies and headers, the multi handle, epoll and timerfds (before t0).
  void prepare();
  // Sends and reads until every request of this loop has produced its record.
  void run();
  // Wakes the loop from another thread (a concurrency slot or conversation was freed, or abort).
  void wake();
  const LoopStats& stats() const;

  struct Impl;  // public only so the loop's file-local transfer type can point back to it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace servebench::client::detail
