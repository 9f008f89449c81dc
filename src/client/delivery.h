// File: client/delivery.h
// Internal: finished records handed to the caller's sink, by whichever thread has time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>

#include "client/client.h"

namespace servebench::client::detail {

struct RunShared;

// Calls the sink for each finished record (after counting its output tokens where the server
// gave no usage), one thread at a time, in the order the loops finished them. An event loop
// delivers in time it would otherwise spin or sleep away (deliver_until); the delivering
// thread (run_thread) takes what the loops leave, at the lowest priority, and calls
// after_records. A busy delivering thread on the loop's core delayed sends: the scheduler
// gives it the core at a tick, for as long as it is owed (docs/performance.md).
class Delivery {
 public:
  Delivery(RunShared& shared, const RunOptions& options, const tokenizer::Tokenizer& tokenizer,
           const RecordSink& sink);

  // From an event loop with nothing to do until `until_ns` (core::mono_ns): delivers waiting
  // records while the next one's estimated cost fits before it, and until `slice_end_ns` has
  // passed. Returns at once when another thread is delivering. Returns whether records are
  // still waiting.
  bool deliver_until(int64_t until_ns, int64_t slice_end_ns);

  // The delivering thread's body, until every one of `loop_count` loops has finished and its
  // records are delivered.
  void run_thread(int loop_count);

  std::exception_ptr sink_failure() const { return sink_failure_; }
  int64_t last_done_ns() const { return last_done_ns_; }

 private:
  // Moves the loops' finished records into `pending_`; the caller holds `turn_`. `wait`: may
  // wait for shared.mutex (the delivering thread), else gives up when it is taken (a loop).
  bool take_finished(bool wait);
  void deliver(record::RequestRecord& record);
  void write_delivered();
  // The caller gave up (its sink or after_records threw; call inside the catch): stops the
  // loops at once, and run() rethrows once they are joined.
  void give_up();

  RunShared& shared_;
  const RunOptions& options_;
  const tokenizer::Tokenizer& tokenizer_;
  const RecordSink& sink_;
  std::mutex turn_;  // held while the sink or after_records runs
  std::deque<record::RequestRecord> pending_;
  size_t unwritten_ = 0;  // sink calls since the last after_records
  int64_t last_done_ns_ = 0;
  std::exception_ptr sink_failure_;
};

}  // namespace servebench::client::detail
