// An event loop's requests before they end (event_loop_impl.h): the plan prepared before t0
// (bodies, a conversation's turns linked, the epoll set, the timerfd and the transport), the
// concurrency slots and active conversations shared by every loop, and a request started on an
// exchange of the pool.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include <algorithm>
#include <unordered_map>

#include "client/event_loop_impl.h"
#include "client/request_body.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::detail {

// --- setup

void EventLoop::Impl::prepare() {
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
  int64_t planned_tokens = 0;
  for (const PlannedRequest* request : plan) planned_tokens += std::max(0, request->max_tokens);
  long_responses = planned_tokens >= kLongResponseTokens * static_cast<int64_t>(plan.size());

  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) throw_loop_error("epoll_create1");
  pace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (pace_fd < 0) throw_loop_error("timerfd_create");
  wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) throw_loop_error("eventfd");
  for (auto [fd, tag] : {std::pair{pace_fd, kPaceTag}, std::pair{wake_fd, kWakeTag}}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u64 = tag;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) throw_loop_error("epoll_ctl");
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

void EventLoop::Impl::throw_bad_link(const Prepared& p) {
  throw core::Error(core::ErrorKind::kInternal, "client",
                    "request " + std::to_string(p.plan->index) + " follows request " +
                        std::to_string(p.plan->follows) +
                        ", which is not an earlier turn of the same conversation in the plan");
}

Exchange* EventLoop::Impl::acquire_exchange() {
  if (!idle.empty()) {
    Exchange* exchange = idle.back();
    idle.pop_back();
    return exchange;
  }
  exchanges.push_back(transport->make_exchange(&scratch));
  return exchanges.back().get();
}

// --- concurrency slots (shared by all loops of the run)

bool EventLoop::Impl::try_acquire_slot() {
  if (shared.concurrency_cap <= 0) return true;
  int current = shared.in_flight.load();
  while (current < shared.concurrency_cap) {
    if (shared.in_flight.compare_exchange_weak(current, current + 1)) return true;
  }
  return false;
}

void EventLoop::Impl::release_slot() {
  if (shared.concurrency_cap <= 0) return;
  shared.in_flight.fetch_sub(1);
  wake_waiting_loops();
}

void EventLoop::Impl::wake_waiting_loops() {
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

bool EventLoop::Impl::opens_conversation(const Prepared& p) {
  return p.plan->conversation >= 0 && p.plan->follows < 0;
}

bool EventLoop::Impl::try_begin_conversation() {
  if (shared.conversation_cap <= 0) return true;
  int current = shared.active_conversations.load();
  while (current < shared.conversation_cap) {
    if (shared.active_conversations.compare_exchange_weak(current, current + 1)) return true;
  }
  return false;
}

void EventLoop::Impl::end_conversation() {
  if (shared.conversation_cap <= 0) return;
  shared.active_conversations.fetch_sub(1);
  wake_waiting_loops();
}

// Both slots a paced request needs (a concurrency slot; a conversation when it opens one),
// or neither.
bool EventLoop::Impl::try_acquire_paced(const Prepared& p) {
  bool opens = opens_conversation(p);
  if (opens && !try_begin_conversation()) return false;
  if (try_acquire_slot()) return true;
  if (opens) end_conversation();
  return false;
}

// --- sending

record::RequestRecord EventLoop::Impl::identity_record(const Prepared& p) {
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

void EventLoop::Impl::start(Prepared& p) {
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
  if (shared.options->live) shared.options->live->sent.fetch_add(1, std::memory_order_relaxed);
  transport->start(*exchange);
}

}  // namespace servebench::client::detail
