// File: client/event_loop_impl.h (internal to the event loop: event_loop.cpp,
// event_loop_requests.cpp, event_loop_records.cpp)
// One loop's state, and its steps by the file that holds them:
//   - event_loop.cpp: the loop itself (epoll_wait, ready sockets) and pacing (the timerfd, the
//     spin, what is due now);
//   - event_loop_requests.cpp: the plan prepared before t0, concurrency slots and active
//     conversations, a request started on an exchange;
//   - event_loop_records.cpp: how requests end: records, a conversation's next turn, the
//     outbox and delivery in idle time, stop and drain.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "client/event_loop.h"
#include "client/sse_stream.h"
#include "client/transport.h"

namespace servebench::client::detail {

// Responses this long (planned tokens on average) make a read of a stream's end up to 100 µs
// later a small part of one: the loop lets arrivals gather (gather_until_ns) even while a
// request waits for the concurrency slot that end frees.
constexpr int64_t kLongResponseTokens = 64;

// epoll tags of the loop's own fds; a transport's tags are fds or pointers, never these.
constexpr uint64_t kPaceTag = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kWakeTag = std::numeric_limits<uint64_t>::max() - 1;

// A failed system call of the loop's own (epoll, timerfd, eventfd): an internal error, with
// errno's text.
[[noreturn]] void throw_loop_error(const std::string& what);

struct EventLoop::Impl {
  RunShared& shared;
  EventLoop* self;
  std::vector<const PlannedRequest*> plan;
  std::vector<Prepared> requests;
  std::vector<Prepared*> paced;       // requests sent at their intended time (not later turns)
  size_t next = 0;                    // next of `paced` to send
  std::deque<Prepared*> ready_turns;  // later turns whose previous turn ended: due now
  size_t remaining = 0;               // requests without a record yet
  bool next_held = false;             // the next paced request found no free slot (or conversation)
  bool turn_held = false;             // the first ready turn found no free concurrency slot
  bool more_due = false;  // dispatch_due stopped at kMaxStartsPerPass with more already due
  std::atomic<bool> waiting_for_slot{false};

  int epoll_fd = -1;
  int pace_fd = -1;
  int wake_fd = -1;
  int64_t pace_armed_ns = -1;  // absolute expiry the pace timer is armed for

  int64_t t0 = 0;
  bool stopping = false;
  int64_t drain_deadline_ns = 0;
  int64_t duration_end_ns = -1;  // absolute end of RunOptions::max_duration_s; -1 = none
  bool duration_ended = false;   // the stop came from max_duration_s: cancel, do not drain

  ParseScratch scratch;
  LoopStats stats;
  TransportContext context;
  // Declared before the pool: exchanges hold transport resources and go first.
  std::unique_ptr<Transport> transport;
  std::vector<std::unique_ptr<Exchange>> exchanges;  // every exchange ever made (the pool)
  std::vector<Exchange*> idle;
  std::vector<record::RequestRecord> outbox;
  // Streamed text bytes per chunk in this loop's last response with chunks (the first guess: a
  // few bytes, as most tokens), for sizing the next record's text before it grows.
  size_t text_bytes_per_chunk = 8;
  // A slot freed by this loop while it waited for one: its next pass can take it.
  bool slot_freed_here = false;
  // Records this loop queued that may still wait for delivery.
  bool records_to_deliver = false;
  // Reads are stamped by the kernel: delivering before them costs no accuracy.
  bool delivers_when_idle = false;
  // The next send is within kSpinNs: epoll_wait does not wait (arm_pace_timer).
  bool in_send_window = false;
  bool long_responses = false;  // the plan's responses average kLongResponseTokens or more
  // Ready sockets counted since arrivals_window_start_ns, and their rate over the last window
  // (gather_until_ns).
  int64_t arrivals_window_start_ns = 0;
  uint32_t arrivals_in_window = 0;
  double arrivals_per_ms = 0;
  bool gathered = false;  // the loop has just slept for arrivals to gather (gather_until_ns)

  Impl(RunShared& s, EventLoop* loop, std::vector<const PlannedRequest*> p)
      : shared(s), self(loop), plan(std::move(p)) {}
  ~Impl();

  // --- event_loop_requests.cpp

  void prepare();
  [[noreturn]] static void throw_bad_link(const Prepared& p);
  Exchange* acquire_exchange();
  bool try_acquire_slot();
  void release_slot();
  void wake_waiting_loops();
  static bool opens_conversation(const Prepared& p);
  bool try_begin_conversation();
  void end_conversation();
  bool try_acquire_paced(const Prepared& p);
  static record::RequestRecord identity_record(const Prepared& p);
  void start(Prepared& p);

  // --- event_loop.cpp

  template <typename Acquire>
  bool acquire_or_wait(Acquire acquire);
  void dispatch_due_on_open_connections();
  void dispatch_due();
  void arm_pace_timer();
  int64_t gather_until_ns(int64_t now);
  bool stop_requested() const;
  int epoll_timeout_ms(int64_t now_abs);
  void run();

  // --- event_loop_records.cpp

  void emit(record::RequestRecord&& record);
  void emit_unsent_turns(Prepared* first, const char* error);
  void after_turn(Prepared& p, const record::RequestRecord& ended);
  void flush_outbox(bool block = false);
  void deliver_until(int64_t until_ns, int64_t slice_end_ns);
  void recycle(Exchange* exchange);
  void retire(Exchange* exchange);
  void finished(Exchange& exchange, std::string transport_error);
  void begin_stop(int64_t now_abs);
  void abort_in_flight();
};

}  // namespace servebench::client::detail
