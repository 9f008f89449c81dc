#include "client/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <limits>
#include <mutex>
#include <unordered_map>

#include "client/delivery.h"
#include "client/request_body.h"
#include "client/sse_stream.h"
#include "client/transport.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

// Sleep on the timerfd until this long before a send is due (/work/shared/limit RESULTS.md §C:
// timerfd + 50 µs spin gives p50 0.1 µs, p99 ≤ 7 µs at 10–50 k/s, where timerfd alone is
// 4–20 µs late at the median), then read what is ready until kSendLookaheadNs before it, then
// spin on the clock. Spinning the whole 50 µs left answers unread at 50k/s, where sends are
// 20 µs apart: floor_pacer --send-port, which reads until 10 µs before, had a p99 a quarter
// of servebench's (docs/performance.md).
constexpr int64_t kSpinNs = 50'000;
// How often the loop looks at RunOptions::stop (set from a signal handler, which cannot wake
// us), only when a stop flag was given.
constexpr int kStopPollMs = 10;
// When the delivering thread held the outbox mutex, try again this soon.
constexpr int64_t kOutboxRetryNs = 1'000'000;
// The delivering thread is woken once this many records wait for it, not for every record:
// at 50k requests/s a wake-up per record cost two context switches per request on the loop's
// core. Records the loops deliver themselves never wake it (it looks by itself every 50 ms,
// delivery.cpp).
constexpr size_t kWakeDeliveryRecords = 64;
// Requests started per pass before the loop services its sockets again. Starting a burst of
// thousands in one go would stamp their send times long before they are written (the writes
// wait for the next epoll pass with libcurl), inflating every TTFT of the burst; reads already
// waiting are delayed by every start too. 2 kept the requests/s of 16 with the measurement
// error of 1 (docs/performance.md, "Starts per pass").
constexpr int kMaxStartsPerPass = 2;
// Between two ready sockets, a send due within this long is waited for and sent first: about
// one socket's work (a 1-token response read and recorded), which would otherwise make it late.
constexpr int64_t kSendLookaheadNs = 10'000;
// With nothing to read and nothing due, a loop delivers finished records (delivery.h) for at
// most this long before it looks at its sockets again: when the kernel stamps arrivals (a read
// it delays then loses no accuracy), or within kSpinNs of a send.
constexpr int64_t kIdleDeliveryNs = 20'000;
// Records delivered while spinning towards a send stop this long before it is due.
constexpr int64_t kDeliveryMarginNs = 1'000;
// epoll tags of the loop's own fds; a transport's tags are fds or pointers, never these.
constexpr uint64_t kPaceTag = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kWakeTag = std::numeric_limits<uint64_t>::max() - 1;
constexpr size_t kErrorBodyBytes = 4096;
constexpr int kMaxEvents = 256;

[[noreturn]] void throw_internal(const std::string& what) {
  throw core::Error(core::ErrorKind::kInternal, "client", what + ": " + std::strerror(errno));
}

}  // namespace

bool has_header(const std::vector<std::string>& headers, std::string_view name) {
  for (const std::string& header : headers) {
    if (header.size() > name.size() && header[name.size()] == ':' &&
        strncasecmp(header.data(), name.data(), name.size()) == 0)
      return true;
  }
  return false;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

std::vector<std::string> base_header_lines(const Endpoint& endpoint) {
  std::vector<std::string> lines;
  if (!has_header(endpoint.headers, "content-type"))
    lines.push_back("Content-Type: application/json");
  if (!endpoint.api_key.empty() && !has_header(endpoint.headers, "authorization"))
    lines.push_back("Authorization: Bearer " + endpoint.api_key);
  // Each request's own x-request-id replaces one given with --header, as in vLLM (a second
  // header line of the same name would reach the server too).
  for (const std::string& header : endpoint.headers) {
    if (!has_header({header}, "x-request-id")) lines.push_back(header);
  }
  return lines;
}

void Exchange::on_body(const char* data, size_t length, int64_t now_ns) {
  if (!body_started) {
    body_started = true;
    record.first_byte_ns = now_ns;
  }
  if (status == 200) {
    reader.feed(data, length, now_ns);
  } else if (error_body.size() < kErrorBodyBytes) {
    error_body.append(data, std::min(length, kErrorBodyBytes - error_body.size()));
  }
}

std::string http_error_message(long status, std::string_view body) {
  std::string message;
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded() && json.is_object()) {
    const nlohmann::json* found = nullptr;
    if (auto error = json.find("error"); error != json.end()) {
      if (error->is_object()) {
        if (auto m = error->find("message"); m != error->end()) found = &*m;
      } else {
        found = &*error;
      }
    }
    for (const char* key : {"message", "detail"}) {
      if (found != nullptr) break;
      if (auto m = json.find(key); m != json.end()) found = &*m;
    }
    if (found != nullptr) message = found->is_string() ? found->get<std::string>() : found->dump();
  }
  if (message.empty()) message = std::string(body.substr(0, 200));
  std::string line = "HTTP " + std::to_string(status);
  if (!message.empty()) line += ": " + message;
  return one_line_message(line, 200 + 10);
}

// ---------------------------------------------------------------------------------------------

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

  Impl(RunShared& s, EventLoop* loop, std::vector<const PlannedRequest*> p)
      : shared(s), self(loop), plan(std::move(p)) {}

  ~Impl() {
    for (auto& exchange : exchanges)
      if (exchange->active) transport->abort(*exchange);
    exchanges.clear();
    transport.reset();
    for (int fd : {epoll_fd, pace_fd, wake_fd})
      if (fd >= 0) close(fd);
  }

  // --- setup

  void prepare() {
    const Endpoint& endpoint = *shared.endpoint;
    const BodyOptions& options = *shared.body;
    requests.resize(plan.size());
    std::unordered_map<uint64_t, Prepared*> by_index;  // only for plans with later turns
    const bool conversations = std::any_of(plan.begin(), plan.end(),
                                           [](const PlannedRequest* r) { return r->follows >= 0; });
    for (size_t i = 0; i < plan.size(); ++i) {
      Prepared& p = requests[i];
      p.plan = plan[i];
      p.request_id = options.request_id_prefix + std::to_string(p.plan->index);
      p.request_id_header = "x-request-id: " + p.request_id;
      p.prompt_tokens = p.plan->prompt_tokens;
      if (conversations) by_index[p.plan->index] = &p;
      if (p.plan->follows >= 0) {
        p.intended_ns = -1;  // until the previous turn ends; never scheduled
        continue;            // its body needs the history
      }
      p.intended_ns = p.plan->intended_ns;
      p.body = build_request_body(endpoint, options, shared.extra_body, *p.plan);
      paced.push_back(&p);
    }
    for (Prepared& p : requests) {
      if (p.plan->follows < 0) continue;
      auto previous = by_index.find(static_cast<uint64_t>(p.plan->follows));
      if (previous == by_index.end() || previous->second->next_turn != nullptr ||
          previous->second == &p || p.plan->conversation < 0 ||
          previous->second->plan->conversation != p.plan->conversation)
        throw_bad_link(p);
      previous->second->next_turn = &p;
    }
    // Every later turn must be reachable from a paced one, or it would never get its record.
    size_t reachable = 0;
    for (Prepared* first : paced)
      for (Prepared* p = first; p != nullptr && reachable <= requests.size(); p = p->next_turn)
        ++reachable;
    if (reachable != requests.size()) {
      for (Prepared& p : requests)
        if (p.plan->follows >= 0) throw_bad_link(p);
    }
    remaining = requests.size();

    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) throw_internal("epoll_create1");
    pace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (pace_fd < 0) throw_internal("timerfd_create");
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw_internal("eventfd");
    for (auto [fd, tag] : {std::pair{pace_fd, kPaceTag}, std::pair{wake_fd, kWakeTag}}) {
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = tag;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) throw_internal("epoll_ctl");
    }

    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    long max_open = static_cast<long>(std::min<rlim_t>(files.rlim_cur, 1'000'000));
    long connections =
        shared.concurrency_cap > 0 ? shared.concurrency_cap : static_cast<long>(requests.size());
    context.endpoint = &endpoint;
    context.epoll_fd = epoll_fd;
    context.stats = &stats;
    context.max_connections = std::clamp(connections, 1L, std::max(1L, max_open - 64));
    context.connections_capped = shared.concurrency_cap > 0;
    context.kernel_timestamps = shared.options->kernel_arrival_times;
    context.finished = [this](Exchange& exchange, std::string transport_error) {
      finished(exchange, std::move(transport_error));
    };
    const bool http1 = use_http1_transport(endpoint, shared.options->http_engine);
    transport = http1 ? make_http1_transport(context) : make_curl_transport(context);
    delivers_when_idle = http1 && shared.options->kernel_arrival_times;
  }

  [[noreturn]] static void throw_bad_link(const Prepared& p) {
    throw core::Error(core::ErrorKind::kInternal, "client",
                      "request " + std::to_string(p.plan->index) + " follows request " +
                          std::to_string(p.plan->follows) +
                          ", which is not an earlier turn of the same conversation in the plan");
  }

  Exchange* acquire_exchange() {
    if (!idle.empty()) {
      Exchange* exchange = idle.back();
      idle.pop_back();
      return exchange;
    }
    exchanges.push_back(transport->make_exchange(&scratch));
    return exchanges.back().get();
  }

  // --- concurrency slots (shared by all loops of the run)

  bool try_acquire_slot() {
    if (shared.concurrency_cap <= 0) return true;
    int current = shared.in_flight.load();
    while (current < shared.concurrency_cap) {
      if (shared.in_flight.compare_exchange_weak(current, current + 1)) return true;
    }
    return false;
  }

  void release_slot() {
    if (shared.concurrency_cap <= 0) return;
    shared.in_flight.fetch_sub(1);
    wake_waiting_loops();
  }

  void wake_waiting_loops() {
    // This loop too: its held request goes out on its next pass, and with nothing else in
    // flight no socket or timer event would end the epoll_wait that comes first. It is told so
    // without a system call: its next epoll_wait does not wait.
    for (EventLoop* loop : shared.loops) {
      if (!loop->impl_->waiting_for_slot.load()) continue;
      if (loop == self)
        slot_freed_here = true;
      else
        loop->wake();
    }
  }

  // --- active conversations (shared too): taken by a conversation's first turn when it is
  // sent, given back when the conversation ends (last turn done, or the rest not sent).

  static bool opens_conversation(const Prepared& p) {
    return p.plan->conversation >= 0 && p.plan->follows < 0;
  }

  bool try_begin_conversation() {
    if (shared.conversation_cap <= 0) return true;
    int current = shared.active_conversations.load();
    while (current < shared.conversation_cap) {
      if (shared.active_conversations.compare_exchange_weak(current, current + 1)) return true;
    }
    return false;
  }

  void end_conversation() {
    if (shared.conversation_cap <= 0) return;
    shared.active_conversations.fetch_sub(1);
    wake_waiting_loops();
  }

  // Both slots a paced request needs (a concurrency slot; a conversation when it opens one),
  // or neither.
  bool try_acquire_paced(const Prepared& p) {
    bool opens = opens_conversation(p);
    if (opens && !try_begin_conversation()) return false;
    if (try_acquire_slot()) return true;
    if (opens) end_conversation();
    return false;
  }

  // --- sending

  static record::RequestRecord identity_record(const Prepared& p) {
    record::RequestRecord record;
    record.index = p.plan->index;
    record.request_id = p.request_id;
    record.warmup = p.plan->warmup;
    record.conversation = p.plan->conversation;
    record.turn = p.plan->turn;
    record.intended_ns = p.intended_ns;
    record.prompt_tokens = p.prompt_tokens;
    record.expected_output_tokens = p.plan->max_tokens;
    return record;
  }

  void start(Prepared& p) {
    Exchange* exchange = acquire_exchange();
    exchange->request = &p;
    exchange->record = identity_record(p);
    // Room for the answer asked for, up to a cap: records are kept for the whole run, and a
    // large max_tokens that ends early at EOS must not hold its unused room (it grows past
    // the cap by doubling).
    constexpr size_t kMaxReservedChunks = 1024;
    const size_t expected_chunks =
        std::min(static_cast<size_t>(std::max(0, p.plan->max_tokens)) + 2, kMaxReservedChunks);
    exchange->record.chunk_ns.reserve(expected_chunks);
    exchange->record.generated_text.reserve(expected_chunks * text_bytes_per_chunk);
    exchange->reader.begin(&exchange->record);
    exchange->error_body.clear();
    exchange->status = 0;
    exchange->body_started = false;
    if (shared.usage_stats_rejected.load(std::memory_order_relaxed))
      p.body.drop_continuous_usage_stats();
    exchange->sent_with_usage_stats = p.body.usage_stats_offset != std::string::npos;
    exchange->record.sent_ns = core::mono_ns() - t0;
    exchange->active = true;
    transport->start(*exchange);
  }

  // Takes what `acquire` takes, else announces the wait and looks again, so a slot freed
  // meanwhile by another loop is not missed (that loop wakes every announced waiter).
  template <typename Acquire>
  bool acquire_or_wait(Acquire acquire) {
    if (acquire()) return true;
    waiting_for_slot.store(true);
    return acquire();
  }

  // Paced requests due now, while the transport can send them on open connections: called
  // between the ready sockets of one batch, so that a send waits for one socket's work rather
  // than the whole batch's. Opening a connection there instead (its responses still unread in
  // the batch) snowballs under load: every late send opened one more.
  void dispatch_due_on_open_connections() {
    for (int started = 0; started < kMaxStartsPerPass; ++started) {
      if (stopping || next_held || next >= paced.size() || !transport->has_idle_connection())
        return;
      const int64_t due = t0 + paced[next]->intended_ns;
      int64_t now = core::mono_ns();
      if (due - now > kSendLookaheadNs) return;
      Prepared& p = *paced[next];
      if (!try_acquire_paced(p)) return;  // a slot frees later: the next full pass handles it
      while (now < due) now = core::mono_ns();
      start(p);
      ++next;
    }
  }

  // Sends the later turns that are ready, then every paced request that is due (spinning for
  // the last kSendLookaheadNs), while slots are free.
  void dispatch_due() {
    int64_t now = core::mono_ns();
    more_due = false;
    slot_freed_here = false;
    int started = 0;
    turn_held = false;
    while (!stopping && !ready_turns.empty()) {
      if (started == kMaxStartsPerPass) {
        more_due = true;
        return;
      }
      if (!acquire_or_wait([this] { return try_acquire_slot(); })) {
        turn_held = true;
        return;
      }
      waiting_for_slot.store(false, std::memory_order_relaxed);
      Prepared* p = ready_turns.front();
      ready_turns.pop_front();
      start(*p);
      ++started;
    }
    now = core::mono_ns();
    for (; !stopping && next < paced.size(); ++started) {
      Prepared& p = *paced[next];
      int64_t due = t0 + p.intended_ns;
      if (due - now > kSendLookaheadNs) return;
      if (started == kMaxStartsPerPass) {
        more_due = true;
        return;
      }
      if (!acquire_or_wait([&] { return try_acquire_paced(p); })) {
        next_held = true;
        return;
      }
      waiting_for_slot.store(false, std::memory_order_relaxed);
      if (due - now > kDeliveryMarginNs) {
        deliver_until(due - kDeliveryMarginNs, due - kDeliveryMarginNs);
        now = core::mono_ns();
      }
      while (now < due) now = core::mono_ns();
      start(p);
      next_held = false;
      ++next;
      now = core::mono_ns();
    }
  }

  void arm_pace_timer() {
    in_send_window = false;
    // With more already due the loop comes straight back (epoll timeout 0): no timer needed.
    if (stopping || next >= paced.size() || next_held || more_due) return;
    int64_t target = t0 + paced[next]->intended_ns - kSpinNs;
    // Within kSpinNs of the send the loop polls its sockets instead (run()).
    in_send_window = target <= core::mono_ns();
    if (in_send_window || target == pace_armed_ns) return;
    itimerspec spec{};
    spec.it_value.tv_sec = target / 1'000'000'000;
    spec.it_value.tv_nsec = target % 1'000'000'000;
    if (timerfd_settime(pace_fd, TFD_TIMER_ABSTIME, &spec, nullptr) != 0)
      throw_internal("timerfd_settime");
    pace_armed_ns = target;
  }

  // --- finishing

  void emit(record::RequestRecord&& record) {
    if (!record.chunk_ns.empty()) {
      // Clamped: one odd response (huge or empty chunks) must not size every next one.
      constexpr size_t kMaxGuess = 64;
      text_bytes_per_chunk = std::clamp<size_t>(
          record.generated_text.size() / record.chunk_ns.size() + 1, 1, kMaxGuess);
    }
    outbox.push_back(std::move(record));
    --remaining;
  }

  // Records for `first` and every turn after it, none of them sent.
  void emit_unsent_turns(Prepared* first, const char* error) {
    for (Prepared* p = first; p != nullptr; p = p->next_turn) {
      record::RequestRecord record = identity_record(*p);
      record.error = error;
      emit(std::move(record));
    }
  }

  // Turn `p` has just emitted its record (`ended`): the conversation's next turn is built with
  // the history and queued (due now), or the conversation ends, its later turns unsent.
  void after_turn(Prepared& p, const record::RequestRecord& ended) {
    if (p.plan->conversation < 0) return;
    Prepared* following = p.next_turn;
    if (following != nullptr && ended.success && !stopping) {
      following->history = std::move(p.history);
      following->history.push_back({p.plan->prompt, ended.generated_text});
      following->intended_ns = ended.done_ns;
      // The history's tokens as far as the client knows them (the server's usage, when given,
      // is what the metrics prefer): the previous prompt with its history, and its answer.
      int32_t answer_tokens = ended.server_completion_tokens >= 0
                                  ? ended.server_completion_tokens
                                  : static_cast<int32_t>(ended.chunk_ns.size());
      following->prompt_tokens =
          ended.prompt_tokens + answer_tokens + following->plan->prompt_tokens;
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
  void flush_outbox(bool block = false) {
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
  void deliver_until(int64_t until_ns, int64_t slice_end_ns) {
    flush_outbox();
    if (records_to_deliver && shared.delivery != nullptr)
      records_to_deliver = shared.delivery->deliver_until(until_ns, slice_end_ns);
  }

  // Back to the pool of idle exchanges; its concurrency slot stays taken.
  void recycle(Exchange* exchange) {
    exchange->active = false;
    exchange->request = nullptr;
    idle.push_back(exchange);
  }

  void retire(Exchange* exchange) {
    recycle(exchange);
    release_slot();
  }

  void finished(Exchange& exchange, std::string transport_error) {
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

  void begin_stop(int64_t now_abs) {
    stopping = true;
    waiting_for_slot.store(false);
    for (; next < paced.size(); ++next) emit_unsent_turns(paced[next], "not sent: stopped");
    for (Prepared* ready : ready_turns) {
      emit_unsent_turns(ready, "not sent: stopped");
      end_conversation();
    }
    ready_turns.clear();
    double drain_s = shared.abort.load() || duration_ended ? 0.0 : shared.options->drain_timeout_s;
    drain_deadline_ns = now_abs + static_cast<int64_t>(std::max(0.0, drain_s) * 1e9);
  }

  void abort_in_flight() {
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

  bool stop_requested() const {
    return shared.abort.load(std::memory_order_relaxed) ||
           (shared.options->stop != nullptr &&
            shared.options->stop->load(std::memory_order_relaxed));
  }

  // --- the loop

  int epoll_timeout_ms(int64_t now_abs) {
    int64_t timeout_ns = -1;
    auto at_most = [&](int64_t ns) {
      ns = std::max<int64_t>(0, ns);
      timeout_ns = timeout_ns < 0 ? ns : std::min(timeout_ns, ns);
    };
    if (more_due || slot_freed_here || (!ready_turns.empty() && !turn_held)) at_most(0);
    if (!outbox.empty()) at_most(kOutboxRetryNs);
    if (int64_t deadline = transport->next_deadline_ns(); deadline >= 0)
      at_most(deadline - now_abs);
    if (shared.options->stop != nullptr && !stopping) at_most(int64_t{kStopPollMs} * 1'000'000);
    if (stopping) at_most(drain_deadline_ns - now_abs);
    if (duration_end_ns >= 0 && !stopping) at_most(duration_end_ns - now_abs);
    if (timeout_ns < 0) return -1;
    return static_cast<int>((timeout_ns + 999'999) / 1'000'000);  // never early
  }

  void run() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // epoll_wait timeouts to the µs, not +50 µs
    t0 = shared.t0_ns.load();
    context.t0_ns = t0;
    if (shared.options->max_duration_s > 0)
      duration_end_ns = t0 + static_cast<int64_t>(shared.options->max_duration_s * 1e9);
    epoll_event events[kMaxEvents];
    while (remaining > 0) {
      if (!stopping && duration_end_ns >= 0 && core::mono_ns() >= duration_end_ns) {
        duration_ended = true;
        begin_stop(core::mono_ns());
      }
      if (!stopping && stop_requested()) begin_stop(core::mono_ns());
      if (stopping && core::mono_ns() >= drain_deadline_ns) abort_in_flight();
      dispatch_due();
      transport->collect();
      flush_outbox();
      if (remaining == 0) break;
      arm_pace_timer();

      const int timeout_ms = epoll_timeout_ms(core::mono_ns());
      // Before a send (in_send_window) the loop used to spin: delivering there delays no read
      // more than that did, whatever clock times the reads.
      const bool may_deliver =
          records_to_deliver && timeout_ms != 0 && (delivers_when_idle || in_send_window);
      int ready =
          epoll_wait(epoll_fd, events, kMaxEvents, may_deliver || in_send_window ? 0 : timeout_ms);
      if (ready < 0 && errno != EINTR) throw_internal("epoll_wait");
      if (ready == 0 && may_deliver) {
        // Nothing to read and nothing due: deliver, then look again. The next send's spin
        // (dispatch_due) is left alone.
        int64_t until = std::numeric_limits<int64_t>::max();
        if (!stopping && !next_held && next < paced.size())
          until = t0 + paced[next]->intended_ns - kSendLookaheadNs;
        deliver_until(until, core::mono_ns() + kIdleDeliveryNs);
        continue;
      }
      for (int i = 0; i < ready; ++i) {
        const uint64_t tag = events[i].data.u64;
        if (tag != kPaceTag && tag != kWakeTag) transport->prefetch(tag);
      }
      for (int i = 0; i < ready; ++i) {
        dispatch_due_on_open_connections();
        uint64_t tag = events[i].data.u64;
        if (tag == kPaceTag) {
          uint64_t expirations;
          if (read(pace_fd, &expirations, sizeof expirations) > 0 && pace_armed_ns >= 0)
            stats.max_loop_lag_ns =
                std::max(stats.max_loop_lag_ns, core::mono_ns() - pace_armed_ns);
          pace_armed_ns = -1;
        } else if (tag == kWakeTag) {
          uint64_t count;
          [[maybe_unused]] ssize_t n = read(wake_fd, &count, sizeof count);
        } else {
          transport->on_ready(tag, events[i].events);
        }
      }
      transport->on_time(core::mono_ns());
    }
    flush_outbox(/*block=*/true);
  }
};

EventLoop::EventLoop(RunShared& shared, std::vector<const PlannedRequest*> requests)
    : impl_(std::make_unique<Impl>(shared, this, std::move(requests))) {}

EventLoop::~EventLoop() = default;

void EventLoop::prepare() {
  impl_->prepare();
}
void EventLoop::run() {
  impl_->run();
}
const LoopStats& EventLoop::stats() const {
  return impl_->stats;
}

void EventLoop::wake() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(impl_->wake_fd, &one, sizeof one);
}

}  // namespace servebench::client::detail
