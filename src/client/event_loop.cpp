#include "client/event_loop.h"

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "client/event_loop_impl.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/interrupt.h"

namespace servebench::client::detail {

namespace {

// Sleep on the timerfd until this long before a send is due (/work/shared/limit RESULTS.md §C:
// timerfd + 50 µs spin gives p50 0.1 µs, p99 ≤ 7 µs at 10–50 k/s, where timerfd alone is
// 4–20 µs late at the median), then read what is ready until kSendLookaheadNs before it, then
// spin on the clock. Spinning the whole 50 µs left answers unread at 50k/s, where sends are
// 20 µs apart: floor_pacer --send-port, which reads until 10 µs before, had a p99 a quarter
// of servebench's (docs/performance.md).
constexpr int64_t kSpinNs = 50'000;
// How often the loop looks at RunOptions::stop and at SIGINT/SIGTERM (core/interrupt.h: set
// from a signal handler, which cannot wake us), only when a flag was given or the handler is
// installed.
constexpr int kStopPollMs = 10;
// When the delivering thread held the outbox mutex, try again this soon.
constexpr int64_t kOutboxRetryNs = 1'000'000;
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
constexpr int kMaxEvents = 256;
// When the loop finds no socket ready, kernel-stamped arrivals of several streams tens of µs
// apart are let gather for as long as kGatherArrivals of them take at the recent rate, at most
// kMaxGatherNs: one wake-up then reads them all, where each used to cost one (a gather that
// finds none costs a second wake-up, hence several).
constexpr double kGatherArrivals = 3;
constexpr int64_t kMaxGatherNs = 100'000;
// Over this long the loop counts its ready sockets, to judge whether a gather finds any.
constexpr int64_t kArrivalWindowNs = 1'000'000;

}  // namespace

void throw_loop_error(const std::string& what) {
  throw core::Error(core::ErrorKind::kInternal, "client", what + ": " + std::strerror(errno));
}

EventLoop::Impl::~Impl() {
  for (auto& exchange : exchanges)
    if (exchange->active) transport->abort(*exchange);
  exchanges.clear();
  transport.reset();
  for (int fd : {epoll_fd, pace_fd, wake_fd})
    if (fd >= 0) close(fd);
}

// Takes what `acquire` takes, else announces the wait and looks again, so a slot freed
// meanwhile by another loop is not missed (that loop wakes every announced waiter).
template <typename Acquire>
bool EventLoop::Impl::acquire_or_wait(Acquire acquire) {
  if (acquire()) return true;
  waiting_for_slot.store(true);
  return acquire();
}

// Paced requests due now, while the transport can send them on open connections: called
// between the ready sockets of one batch, so that a send waits for one socket's work rather
// than the whole batch's. Opening a connection there instead (its responses still unread in
// the batch) snowballs under load: every late send opened one more.
void EventLoop::Impl::dispatch_due_on_open_connections() {
  for (int started = 0; started < kMaxStartsPerPass; ++started) {
    if (stopping || next_held || next >= paced.size() || !transport->has_idle_connection()) return;
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
void EventLoop::Impl::dispatch_due() {
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

void EventLoop::Impl::arm_pace_timer() {
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
    throw_loop_error("timerfd_settime");
  pace_armed_ns = target;
}

// The loop is about to wait for its sockets. Against a server that ticks each stream on its
// own clock (servebench sim, a real engine's requests), events of different streams come tens
// of µs apart, and a loop that keeps up woke for each one: against servebench sim its CPU per
// event was 1.27-1.41x floor_reader's, mostly the kernel's work to sleep and wake it
// (docs/performance.md). When nothing is ready, sleeping a little first lets the next ones
// gather; the kernel stamps arrivals, so a late read costs no accuracy (a chunk's time is its
// segment's arrival; segments of one stream read together share the later one's stamp, as they
// do when a loop is busy). The end of such a gather, or 0 for none: not near a paced send, not
// right after a gather that found nothing, not when too few sockets were ready lately for a
// gather to find one, and not when a read may free a concurrency slot or a conversation someone
// waits for, unless responses are long (then the wait is a small part of one).
int64_t EventLoop::Impl::gather_until_ns(int64_t now) {
  if (now - arrivals_window_start_ns >= kArrivalWindowNs) {
    arrivals_per_ms = static_cast<double>(arrivals_in_window) * 1e6 /
                      static_cast<double>(now - arrivals_window_start_ns);
    arrivals_in_window = 0;
    arrivals_window_start_ns = now;
  }
  const bool someone_waits = next_held || turn_held || !ready_turns.empty();
  if (!delivers_when_idle || stopping || gathered || (someone_waits && !long_responses)) return 0;
  // Too few arrivals lately for a gather to find one: it would only add a wake-up.
  if (arrivals_per_ms * static_cast<double>(kMaxGatherNs) < 1e6) return 0;
  const auto gather_ns =
      std::min(kMaxGatherNs, static_cast<int64_t>(kGatherArrivals * 1e6 / arrivals_per_ms));
  int64_t until = now + gather_ns;
  // A held request goes when a slot frees, not at its time.
  if (!next_held && next < paced.size())
    until = std::min(until, t0 + paced[next]->intended_ns - kSpinNs);
  return until - now < gather_ns / 2 ? 0 : until;
}

bool EventLoop::Impl::stop_requested() const {
  return shared.abort.load(std::memory_order_relaxed) || core::interrupted() ||
         (shared.options->stop != nullptr && shared.options->stop->load(std::memory_order_relaxed));
}

// --- the loop

int EventLoop::Impl::epoll_timeout_ms(int64_t now_abs) {
  int64_t timeout_ns = -1;
  auto at_most = [&](int64_t ns) {
    ns = std::max<int64_t>(0, ns);
    timeout_ns = timeout_ns < 0 ? ns : std::min(timeout_ns, ns);
  };
  if (more_due || slot_freed_here || (!ready_turns.empty() && !turn_held)) at_most(0);
  if (!outbox.empty()) at_most(kOutboxRetryNs);
  if (int64_t deadline = transport->next_deadline_ns(); deadline >= 0) at_most(deadline - now_abs);
  if ((shared.options->stop != nullptr || core::interrupt_handler_installed()) && !stopping)
    at_most(int64_t{kStopPollMs} * 1'000'000);
  if (stopping) at_most(drain_deadline_ns - now_abs);
  if (duration_end_ns >= 0 && !stopping) at_most(duration_end_ns - now_abs);
  if (timeout_ns < 0) return -1;
  return static_cast<int>((timeout_ns + 999'999) / 1'000'000);  // never early
}

void EventLoop::Impl::run() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // epoll_wait timeouts to the µs, not +50 µs
  t0 = shared.t0_ns.load();
  context.t0_ns = t0;
  if (shared.options->max_duration_s > 0)
    duration_end_ns = t0 + detail::timeout_ns(shared.options->max_duration_s, 0);
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

    const int64_t now = core::mono_ns();
    const int timeout_ms = epoll_timeout_ms(now);
    // Before a send (in_send_window) the loop used to spin: delivering there delays no read
    // more than that did, whatever clock times the reads.
    const bool may_deliver =
        records_to_deliver && timeout_ms != 0 && (delivers_when_idle || in_send_window);
    const int64_t gather_until =
        may_deliver || in_send_window || timeout_ms == 0 ? 0 : gather_until_ns(now);
    int ready = epoll_wait(epoll_fd, events, kMaxEvents,
                           may_deliver || in_send_window || gather_until > 0 ? 0 : timeout_ms);
    if (ready < 0 && errno != EINTR) throw_loop_error("epoll_wait");
    gathered = false;
    if (ready == 0 && may_deliver) {
      // Nothing to read and nothing due: deliver, then look again. The next send's spin
      // (dispatch_due) is left alone.
      int64_t until = std::numeric_limits<int64_t>::max();
      if (!stopping && !next_held && next < paced.size())
        until = t0 + paced[next]->intended_ns - kSendLookaheadNs;
      deliver_until(until, core::mono_ns() + kIdleDeliveryNs);
      continue;
    }
    if (ready == 0 && gather_until > 0) {
      const timespec wake{static_cast<time_t>(gather_until / 1'000'000'000),
                          static_cast<long>(gather_until % 1'000'000'000)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr);
      gathered = true;  // the next wait waits, whatever came meanwhile
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
          stats.max_loop_lag_ns = std::max(stats.max_loop_lag_ns, core::mono_ns() - pace_armed_ns);
        pace_armed_ns = -1;
      } else if (tag == kWakeTag) {
        uint64_t count;
        [[maybe_unused]] ssize_t n = read(wake_fd, &count, sizeof count);
      } else {
        ++arrivals_in_window;
        transport->on_ready(tag, events[i].events);
      }
    }
    transport->on_time(core::mono_ns());
  }
  flush_outbox(/*block=*/true);
}

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
