// How an event loop's requests end (event_loop_impl.h): a finished exchange turned into its
// record, a conversation's next turn queued (or the rest of it left unsent), records handed to
// the delivering thread or delivered in the loop's idle time, stop and drain.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <mutex>

#include "client/delivery.h"
#include "client/event_loop_impl.h"
#include "client/request_body.h"
#include "core/clock.h"

namespace servebench::client::detail {

namespace {

// The delivering thread is woken once this many records wait for it, not for every record:
// at 50k requests/s a wake-up per record cost two context switches per request on the loop's
// core. Records the loops deliver themselves never wake it (it looks by itself every 50 ms,
// delivery.cpp).
constexpr size_t kWakeDeliveryRecords = 64;

}  // namespace

// --- finishing

void EventLoop::Impl::emit(record::RequestRecord&& record) {
  if (!record.chunk_ns.empty()) {
    // Clamped: one odd response (huge or empty chunks) must not size every next one.
    constexpr size_t kMaxGuess = 64;
    text_bytes_per_chunk =
        std::clamp<size_t>(record.generated_text.size() / record.chunk_ns.size() + 1, 1, kMaxGuess);
  }
  outbox.push_back(std::move(record));
  --remaining;
}

// Records for `first` and every turn after it, none of them sent.
void EventLoop::Impl::emit_unsent_turns(Prepared* first, const char* error) {
  for (Prepared* p = first; p != nullptr; p = p->next_turn) {
    record::RequestRecord record = identity_record(*p);
    record.error = error;
    emit(std::move(record));
  }
}

// Turn `p` has just emitted its record (`ended`): the conversation's next turn is built with
// the history and queued (due now), or the conversation ends, its later turns unsent.
void EventLoop::Impl::after_turn(Prepared& p, const record::RequestRecord& ended) {
  if (p.plan->conversation < 0) return;
  Prepared* following = p.next_turn;
  if (following != nullptr && ended.success && !stopping) {
    following->history = std::move(p.history);
    following->history.push_back({p.plan->prompt, ended.generated_text});
    following->intended_ns = ended.done_ns;
    // The history's tokens as far as the client knows them (the server's usage, when given,
    // is what the metrics prefer): the previous prompt with its history, and its answer.
    const int64_t answer_tokens = ended.server_completion_tokens >= 0
                                      ? ended.server_completion_tokens
                                      : static_cast<int64_t>(ended.chunk_ns.size());
    following->prompt_tokens = static_cast<int32_t>(
        std::min<int64_t>(std::numeric_limits<int32_t>::max(),
                          ended.prompt_tokens + answer_tokens + following->plan->prompt_tokens));
    following->body = build_request_body(*shared.endpoint, *shared.body, shared.extra_body,
                                         *following->plan, following->history);
    ready_turns.push_back(following);
    return;
  }
  const char* error = ended.success ? "not sent: stopped" : "not sent: previous turn failed";
  emit_unsent_turns(following, error);  // may grow the outbox: `ended` is not used after
  end_conversation();
}

// Queues finished records for delivery (delivery.h). The delivering thread runs at the
// lowest priority, so it may be preempted while it holds the mutex: the loop never waits for
// it mid-run (`block` is only for the last flush); records left here go on the next pass.
void EventLoop::Impl::flush_outbox(bool block) {
  if (outbox.empty()) return;
  size_t waiting = 0;  // records the delivering thread has yet to take
  {
    std::unique_lock lock(shared.mutex, std::defer_lock);
    if (block) {
      lock.lock();
    } else if (!lock.try_lock()) {
      return;
    }
    for (auto& record : outbox) shared.finished.push_back(std::move(record));
    waiting = shared.finished.size();
  }
  outbox.clear();
  records_to_deliver = true;
  if (block || waiting >= kWakeDeliveryRecords) shared.ready.notify_one();
}

// Time with nothing to do until `until_ns`: finished records are delivered in it, this loop's
// own first, so the delivering thread has little left to take the core for.
void EventLoop::Impl::deliver_until(int64_t until_ns, int64_t slice_end_ns) {
  flush_outbox();
  if (records_to_deliver && shared.delivery != nullptr)
    records_to_deliver = shared.delivery->deliver_until(until_ns, slice_end_ns);
}

// Back to the pool of idle exchanges; its concurrency slot stays taken.
void EventLoop::Impl::recycle(Exchange* exchange) {
  exchange->active = false;
  exchange->request = nullptr;
  idle.push_back(exchange);
}

void EventLoop::Impl::retire(Exchange* exchange) {
  recycle(exchange);
  release_slot();
}

void EventLoop::Impl::finished(Exchange& exchange, std::string transport_error) {
  int64_t now = core::mono_ns() - t0;
  stats.sse_events += exchange.reader.events();
  record::RequestRecord& record = exchange.record;
  record.http_status = exchange.status;
  bool clean = transport_error.empty();

  if (clean && (exchange.status == 400 || exchange.status == 422) &&
      exchange.sent_with_usage_stats &&
      exchange.error_body.find("continuous_usage_stats") != std::string::npos) {
    // The server refuses per-chunk usage: ask no more, and resend this request without it
    // (it keeps its concurrency slot; the refusal is not a failure).
    shared.usage_stats_rejected.store(true);
    if (!stopping) {
      Prepared* p = exchange.request;
      recycle(&exchange);
      start(*p);
      return;
    }
  }

  if (!clean) {
    if (record.error.empty()) record.error = std::move(transport_error);
    record.success = false;
  } else if (exchange.status != 200) {
    record.error = http_error_message(exchange.status, exchange.error_body);
    record.success = false;
  } else {
    exchange.reader.finish(now);
  }
  record.done_ns = exchange.reader.saw_done() ? exchange.reader.done_ns() : now;
  Prepared* turn = exchange.request;
  emit(std::move(record));
  retire(&exchange);
  after_turn(*turn, outbox.back());
}

// --- stop and drain

void EventLoop::Impl::begin_stop(int64_t now_abs) {
  stopping = true;
  waiting_for_slot.store(false);
  for (; next < paced.size(); ++next) emit_unsent_turns(paced[next], "not sent: stopped");
  for (Prepared* ready : ready_turns) {
    emit_unsent_turns(ready, "not sent: stopped");
    end_conversation();
  }
  ready_turns.clear();
  double drain_s = shared.abort.load() || duration_ended ? 0.0 : shared.options->drain_timeout_s;
  drain_deadline_ns = now_abs + timeout_ns(drain_s, 0);
}

void EventLoop::Impl::abort_in_flight() {
  int64_t now = core::mono_ns() - t0;
  for (auto& owned : exchanges) {
    Exchange* exchange = owned.get();
    if (!exchange->active) continue;
    transport->abort(*exchange);
    stats.sse_events += exchange->reader.events();
    record::RequestRecord& record = exchange->record;
    record.http_status = exchange->status;
    record.success = false;
    record.error = duration_ended
                       ? "cancelled: still running when the run's duration ended"
                       : "aborted: still running when the drain timeout after stop ended";
    record.done_ns = now;
    Prepared* turn = exchange->request;
    emit(std::move(record));
    retire(exchange);
    after_turn(*turn, outbox.back());
  }
}

}  // namespace servebench::client::detail
