#include "client/delivery.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

#include "client/event_loop.h"
#include "core/clock.h"
#include "core/system.h"
#include "tokenizer/tokenizer.h"

namespace servebench::client::detail {

namespace {

// What one record costs the sink, roughly (a JSON line, counting, keeping it): an event loop
// starts a record only when this fits before its next send. A 1-token record takes ~2 µs, a
// 256-chunk one ~8 µs (docs/performance.md, micro table).
int64_t estimated_delivery_ns(const record::RequestRecord& record) {
  constexpr int64_t kBaseNs = 2'000, kPerChunkNs = 40;
  return kBaseNs + kPerChunkNs * static_cast<int64_t>(record.chunk_ns.size());
}

// The delivering thread gives the core back this often: a loop that spins towards its next
// send never sleeps, so nothing preempts this thread before the next scheduler tick (4 ms at
// HZ=250, whatever its slice).
constexpr int64_t kSliceNs = 50'000;
// It looks for records by itself this often (and writes them: records reach the file within
// about this long); the loops wake it sooner for batches (event_loop.cpp). Each look takes the
// core from a loop that never sleeps at high rates: woken every 2 ms, it preempted the loop
// ~470-600 times in a 2 s run at 50k requests/s; at 50 ms, ~130-210 (docs/performance.md).
constexpr auto kPoll = std::chrono::milliseconds(50);
// Records the loops have not delivered this long after they finished are this thread's.
constexpr int64_t kHandOverNs = 2'000'000;

}  // namespace

Delivery::Delivery(RunShared& shared, const RunOptions& options,
                   const tokenizer::Tokenizer& tokenizer, const RecordSink& sink)
    : shared_(shared), options_(options), tokenizer_(tokenizer), sink_(sink) {}

bool Delivery::take_finished(bool wait) {
  std::unique_lock lock(shared_.mutex, std::defer_lock);
  if (wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return !pending_.empty();
  }
  if (pending_.empty()) {
    pending_.swap(shared_.finished);
  } else {
    std::move(shared_.finished.begin(), shared_.finished.end(), std::back_inserter(pending_));
    shared_.finished.clear();
  }
  return !pending_.empty();
}

void Delivery::deliver(record::RequestRecord& record) {
  if (sink_failure_) return;
  // Only where the server's usage does not say (absent or 0), as vLLM's `if not output_len`:
  // counting every text cost as much as reading it.
  if (record.server_completion_tokens <= 0) {
    if (!record.generated_text.empty())
      record.client_output_tokens = static_cast<int32_t>(tokenizer_.count(record.generated_text));
    else if (record.success)
      record.client_output_tokens = 0;
  }
  if (record.sent_ns >= 0) last_done_ns_ = std::max(last_done_ns_, record.done_ns);
  try {
    sink_(std::move(record));
    ++unwritten_;
  } catch (...) {
    give_up();
  }
}

void Delivery::give_up() {
  sink_failure_ = std::current_exception();
  shared_.abort.store(true);
  for (EventLoop* loop : shared_.loops) loop->wake();
}

void Delivery::write_delivered() {
  if (unwritten_ == 0 || !options_.after_records || sink_failure_) return;
  unwritten_ = 0;
  try {
    options_.after_records();
  } catch (...) {
    give_up();
  }
}

bool Delivery::deliver_until(int64_t until_ns, int64_t slice_end_ns) {
  std::unique_lock turn(turn_, std::try_to_lock);
  if (!turn.owns_lock() || !take_finished(/*wait=*/false)) return false;
  while (!pending_.empty()) {
    const int64_t now = core::mono_ns();
    if (now >= slice_end_ns || now + estimated_delivery_ns(pending_.front()) > until_ns)
      return true;
    deliver(pending_.front());
    pending_.pop_front();
  }
  return false;
}

void Delivery::run_thread(int loop_count) {
  core::make_this_thread_background();
  for (bool all_finished = false; !all_finished;) {
    {
      std::unique_lock lock(shared_.mutex);
      // Even with records waiting: a loop with time to spare delivers them sooner, and this
      // thread, preempted while it holds the turn, would keep the loops from it.
      if (shared_.loops_finished < loop_count) shared_.ready.wait_for(lock, kPoll);
      all_finished = shared_.loops_finished == loop_count;
    }
    // Records younger than this are left to the loops' idle time, which comes soon unless the
    // loops are fully busy.
    const int64_t young_after_ns = core::mono_ns() - kHandOverNs - shared_.t0_ns.load();
    int64_t slice_start_ns = core::mono_ns();
    // One record per turn: preempted between two, this thread holds nothing a loop waits for.
    for (bool more = true; more;) {
      // Unneeded yields return at once; so do yields while the scheduler still owes this
      // thread time (docs/performance.md, "Record delivery…").
      if (core::mono_ns() - slice_start_ns > kSliceNs) {
        sched_yield();
        slice_start_ns = core::mono_ns();
      }
      std::lock_guard turn(turn_);
      if (pending_.empty()) take_finished(/*wait=*/true);
      more = !pending_.empty() && (all_finished || pending_.front().done_ns < young_after_ns);
      if (more) {
        deliver(pending_.front());
        pending_.pop_front();
      } else {
        // Here, not on a loop: a write may block (a slow disk), a loop must not.
        write_delivered();
      }
    }
  }
}

}  // namespace servebench::client::detail
