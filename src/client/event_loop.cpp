#include "client/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "client/request_body.h"
#include "client/sse_stream.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

// Sleep on the timerfd until this long before a send is due, then spin on the clock
// (/work/shared/limit RESULTS.md §C: timerfd + 50 µs spin gives p50 0.1 µs, p99 ≤ 7 µs at
// 10–50 k/s, where timerfd alone is 4–20 µs late at the median).
constexpr int64_t kSpinNs = 50'000;
// How often the loop looks at RunOptions::stop (set from a signal handler, which cannot wake
// us), only when a stop flag was given.
constexpr int kStopPollMs = 10;
// When the delivering thread held the outbox mutex, try again this soon.
constexpr int64_t kOutboxRetryNs = 1'000'000;
// Requests started per pass before the loop services its sockets again. Starting a burst of
// thousands in one go would stamp their send times long before curl gets to write them (the
// write waits for the next epoll pass), inflating every TTFT of the burst; reads already
// waiting are delayed by every start too. 2 kept the requests/s of 16 with the measurement
// error of 1 (docs/performance.md, "Starts per pass").
constexpr int kMaxStartsPerPass = 2;
constexpr uint64_t kPaceTag = uint64_t{1} << 40;
constexpr uint64_t kWakeTag = (uint64_t{1} << 40) + 1;
constexpr size_t kErrorBodyBytes = 4096;
constexpr int kMaxEvents = 256;

std::once_flag curl_once;

[[noreturn]] void throw_internal(const std::string& what) {
  throw core::Error(core::ErrorKind::kInternal, "client", what + ": " + std::strerror(errno));
}

bool has_header(const std::vector<std::string>& headers, std::string_view name) {
  for (const std::string& header : headers) {
    if (header.size() > name.size() && header[name.size()] == ':' &&
        strncasecmp(header.data(), name.data(), name.size()) == 0)
      return true;
  }
  return false;
}

struct Prepared {
  const PlannedRequest* plan = nullptr;
  RequestBody body;
  std::string request_id;
  std::string request_id_header;
  curl_slist header_node{};  // x-request-id, then the shared base headers
};

}  // namespace

void ensure_curl_initialized() {
  std::call_once(curl_once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_global_init failed");
  });
}

curl_slist* build_base_headers(const Endpoint& endpoint) {
  curl_slist* list = nullptr;
  auto add = [&](const std::string& header) {
    curl_slist* grown = curl_slist_append(list, header.c_str());
    if (grown == nullptr) {
      curl_slist_free_all(list);
      throw core::Error(core::ErrorKind::kInternal, "client", "out of memory building headers");
    }
    list = grown;
  };
  if (!has_header(endpoint.headers, "content-type")) add("Content-Type: application/json");
  add("Expect:");  // no 100-continue wait on large prompts
  if (!endpoint.api_key.empty() && !has_header(endpoint.headers, "authorization"))
    add("Authorization: Bearer " + endpoint.api_key);
  for (const std::string& header : endpoint.headers) add(header);
  return list;
}

void set_common_options(CURL* easy, const Endpoint& endpoint, long buffer_bytes) {
  curl_easy_setopt(easy, CURLOPT_URL, endpoint.url.c_str());
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, buffer_bytes);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // as aiohttp (trust_env=False): no env proxies
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::max(1.0, endpoint.timeout_s * 1000.0)));
  if (endpoint.insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  // Over TLS, wait for a connection that may multiplex (HTTP/2) rather than open another.
  if (endpoint.url.rfind("https://", 0) == 0) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
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

std::string transport_error_message(CURLcode code, const char* error_buffer) {
  std::string message = std::string("transport: ") + curl_easy_strerror(code);
  if (error_buffer != nullptr && error_buffer[0] != '\0')
    message += std::string(": ") + error_buffer;
  return one_line_message(message);
}

// ---------------------------------------------------------------------------------------------

struct Transfer {
  EventLoop::Impl* loop = nullptr;
  CURL* easy = nullptr;
  Prepared* request = nullptr;
  record::RequestRecord record;
  StreamReader reader;
  std::string error_body;
  long status = 0;
  bool status_known = false;
  bool sent_with_usage_stats = false;
  bool active = false;
  char error_buffer[CURL_ERROR_SIZE] = {};

  explicit Transfer(ParseScratch* scratch) : reader(scratch) {}
};

struct EventLoop::Impl {
  RunShared& shared;
  EventLoop* self;
  std::vector<const PlannedRequest*> plan;
  std::vector<Prepared> requests;
  size_t next = 0;         // next request to send
  size_t remaining = 0;    // requests without a record yet
  bool next_held = false;  // the next request found no free concurrency slot at its time
  bool more_due = false;   // dispatch_due stopped at kMaxStartsPerPass with more already due
  std::atomic<bool> waiting_for_slot{false};

  int epoll_fd = -1;
  int pace_fd = -1;
  int wake_fd = -1;
  int64_t pace_armed_ns = -1;  // absolute expiry the pace timer is armed for
  CURLM* multi = nullptr;
  curl_slist* base_headers = nullptr;
  long buffer_bytes = 64 * 1024;
  int64_t curl_deadline_ns = -1;  // absolute; -1 = no curl timeout pending
  bool curl_due_now = false;

  int64_t t0 = 0;
  bool stopping = false;
  int64_t drain_deadline_ns = 0;

  ParseScratch scratch;
  std::vector<std::unique_ptr<Transfer>> transfers;  // every transfer ever made (the pool)
  std::vector<Transfer*> idle;
  std::vector<record::RequestRecord> outbox;
  LoopStats stats;

  Impl(RunShared& s, EventLoop* loop, std::vector<const PlannedRequest*> p)
      : shared(s), self(loop), plan(std::move(p)) {}

  ~Impl() {
    for (auto& transfer : transfers) {
      if (transfer->active && multi != nullptr) curl_multi_remove_handle(multi, transfer->easy);
      curl_easy_cleanup(transfer->easy);
    }
    if (multi != nullptr) curl_multi_cleanup(multi);
    curl_slist_free_all(base_headers);
    for (int fd : {epoll_fd, pace_fd, wake_fd})
      if (fd >= 0) close(fd);
  }

  // --- curl callbacks

  static int on_socket(CURL*, curl_socket_t fd, int what, void* user, void* socket_data) {
    auto* loop = static_cast<Impl*>(user);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      return 0;
    }
    epoll_event event{};
    event.events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    event.data.u64 = static_cast<uint64_t>(fd);
    if (socket_data == nullptr) {
      if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0 && errno == EEXIST)
        epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, fd, &event);
      curl_multi_assign(loop->multi, fd, loop);  // mark as registered
    } else {
      epoll_ctl(loop->epoll_fd, EPOLL_CTL_MOD, fd, &event);
    }
    return 0;
  }

  static int on_timer(CURLM*, long timeout_ms, void* user) {
    auto* loop = static_cast<Impl*>(user);
    if (timeout_ms < 0) {
      loop->curl_deadline_ns = -1;
    } else if (timeout_ms == 0) {
      loop->curl_due_now = true;
    } else {
      loop->curl_deadline_ns = core::mono_ns() + int64_t{timeout_ms} * 1'000'000;
    }
    return 0;
  }

  static size_t on_write(char* data, size_t size, size_t count, void* user) {
    auto* transfer = static_cast<Transfer*>(user);
    size_t length = size * count;
    Impl& loop = *transfer->loop;
    int64_t now = core::mono_ns() - loop.t0;
    loop.stats.bytes_received += length;
    if (!transfer->status_known) {
      transfer->status_known = true;
      curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &transfer->status);
      transfer->record.first_byte_ns = now;
    }
    if (transfer->status == 200) {
      transfer->reader.feed(data, length, now);
    } else if (transfer->error_body.size() < kErrorBodyBytes) {
      transfer->error_body.append(data,
                                  std::min(length, kErrorBodyBytes - transfer->error_body.size()));
    }
    return length;
  }

  // --- setup

  void prepare() {
    const Endpoint& endpoint = *shared.endpoint;
    const BodyOptions& options = *shared.body;
    requests.resize(plan.size());
    for (size_t i = 0; i < plan.size(); ++i) {
      Prepared& p = requests[i];
      p.plan = plan[i];
      p.body = build_request_body(endpoint, options, shared.extra_body, *p.plan);
      p.request_id = options.request_id_prefix + std::to_string(p.plan->index);
      p.request_id_header = "x-request-id: " + p.request_id;
    }
    base_headers = build_base_headers(endpoint);
    for (Prepared& p : requests) {  // after the vector is final: nodes point into it
      p.header_node.data = p.request_id_header.data();
      p.header_node.next = base_headers;
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

    multi = curl_multi_init();
    if (multi == nullptr)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_multi_init");
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    // Keep one idle connection per possible in-flight request (curl's default cache shrinks as
    // handles are removed, which would close keep-alive connections between requests).
    rlimit files{};
    getrlimit(RLIMIT_NOFILE, &files);
    long max_open = static_cast<long>(std::min<rlim_t>(files.rlim_cur, 1'000'000));
    long connections =
        shared.concurrency_cap > 0 ? shared.concurrency_cap : static_cast<long>(requests.size());
    connections = std::clamp(connections, 1L, std::max(1L, max_open - 64));
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, connections);
    if (shared.concurrency_cap > 0)
      curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(connections));
    // Large read buffers for up to ~1k streams; smaller beyond so 10k streams stay in memory.
    buffer_bytes = connections <= 1024 ? 64 * 1024 : 16 * 1024;
  }

  Transfer* acquire_transfer() {
    if (!idle.empty()) {
      Transfer* transfer = idle.back();
      idle.pop_back();
      return transfer;
    }
    auto transfer = std::make_unique<Transfer>(&scratch);
    transfer->loop = this;
    transfer->easy = curl_easy_init();
    if (transfer->easy == nullptr)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_easy_init failed");
    set_common_options(transfer->easy, *shared.endpoint, buffer_bytes);
    curl_easy_setopt(transfer->easy, CURLOPT_WRITEFUNCTION, &Impl::on_write);
    curl_easy_setopt(transfer->easy, CURLOPT_WRITEDATA, transfer.get());
    curl_easy_setopt(transfer->easy, CURLOPT_PRIVATE, transfer.get());
    curl_easy_setopt(transfer->easy, CURLOPT_ERRORBUFFER, transfer->error_buffer);
    transfers.push_back(std::move(transfer));
    return transfers.back().get();
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
    // This loop too: its held request goes out on its next pass, and with nothing else in
    // flight no socket or timer event would end the epoll_wait that comes first.
    for (EventLoop* loop : shared.loops) {
      if (loop->impl_->waiting_for_slot.load()) loop->wake();
    }
  }

  // --- sending

  static record::RequestRecord identity_record(const Prepared& p) {
    record::RequestRecord record;
    record.index = p.plan->index;
    record.request_id = p.request_id;
    record.warmup = p.plan->warmup;
    record.intended_ns = p.plan->intended_ns;
    record.prompt_tokens = p.plan->prompt_tokens;
    record.expected_output_tokens = p.plan->max_tokens;
    return record;
  }

  void start(Prepared& p) {
    Transfer* transfer = acquire_transfer();
    transfer->request = &p;
    transfer->record = identity_record(p);
    size_t expected_chunks = static_cast<size_t>(std::max(0, p.plan->max_tokens)) + 2;
    transfer->record.chunk_ns.reserve(expected_chunks);
    transfer->record.chunk_tokens.reserve(expected_chunks);
    transfer->record.generated_text.reserve(expected_chunks * 8);
    transfer->reader.begin(&transfer->record);
    transfer->error_body.clear();
    transfer->status = 0;
    transfer->status_known = false;
    transfer->error_buffer[0] = '\0';
    if (shared.usage_stats_rejected.load(std::memory_order_relaxed))
      p.body.drop_continuous_usage_stats();
    transfer->sent_with_usage_stats = p.body.usage_stats_offset != std::string::npos;

    CURL* easy = transfer->easy;
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(p.body.json.size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, p.body.json.data());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, &p.header_node);

    transfer->record.sent_ns = core::mono_ns() - t0;
    transfer->active = true;
    curl_multi_add_handle(multi, easy);
    // Start it now (connect, or write on a kept-alive connection) instead of waiting for the
    // timer callback's 0 ms round through the loop.
    curl_due_now = false;
    int running = 0;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
  }

  // Sends every request that is due (spinning for the last kSpinNs) while slots are free.
  void dispatch_due() {
    int64_t now = core::mono_ns();
    more_due = false;
    for (int started = 0; !stopping && next < requests.size(); ++started) {
      Prepared& p = requests[next];
      int64_t due = t0 + p.plan->intended_ns;
      if (due - now > kSpinNs) return;
      if (started == kMaxStartsPerPass) {
        more_due = true;
        return;
      }
      if (!try_acquire_slot()) {
        // Announce, then look again, so a slot freed meanwhile by another loop is not missed.
        waiting_for_slot.store(true);
        if (!try_acquire_slot()) {
          next_held = true;
          return;
        }
      }
      waiting_for_slot.store(false, std::memory_order_relaxed);
      while (now < due) now = core::mono_ns();
      start(p);
      next_held = false;
      ++next;
      now = core::mono_ns();
    }
  }

  void arm_pace_timer() {
    // With more already due the loop comes straight back (epoll timeout 0): no timer needed.
    if (stopping || next >= requests.size() || next_held || more_due) return;
    int64_t target = t0 + requests[next].plan->intended_ns - kSpinNs;
    if (target == pace_armed_ns) return;
    itimerspec spec{};
    spec.it_value.tv_sec = target / 1'000'000'000;
    spec.it_value.tv_nsec = target % 1'000'000'000;
    if (timerfd_settime(pace_fd, TFD_TIMER_ABSTIME, &spec, nullptr) != 0)
      throw_internal("timerfd_settime");
    pace_armed_ns = target;
  }

  // --- finishing

  void emit(record::RequestRecord&& record) {
    outbox.push_back(std::move(record));
    --remaining;
  }

  // Hands finished records to the delivering thread. That thread runs at the lowest priority,
  // so it may be preempted while it holds the mutex: the loop never waits for it mid-run
  // (`block` is only for the last flush); records left here go on the next pass.
  void flush_outbox(bool block = false) {
    if (outbox.empty()) return;
    {
      std::unique_lock lock(shared.mutex, std::defer_lock);
      if (block) {
        lock.lock();
      } else if (!lock.try_lock()) {
        return;
      }
      for (auto& record : outbox) shared.finished.push_back(std::move(record));
    }
    shared.ready.notify_one();
    outbox.clear();
  }

  // Back to the pool of idle transfers; its concurrency slot stays taken.
  void recycle(Transfer* transfer) {
    transfer->active = false;
    transfer->request = nullptr;
    idle.push_back(transfer);
  }

  void retire(Transfer* transfer) {
    recycle(transfer);
    release_slot();
  }

  void complete(Transfer* transfer, CURLcode result) {
    int64_t now = core::mono_ns() - t0;
    CURL* easy = transfer->easy;
    curl_multi_remove_handle(multi, easy);
    long connects = 0;
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
    stats.connections_opened += static_cast<uint64_t>(std::max(0L, connects));
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    stats.sse_events += transfer->reader.events();
    record::RequestRecord& record = transfer->record;
    record.http_status = static_cast<int>(status);

    if (result == CURLE_OK && (status == 400 || status == 422) && transfer->sent_with_usage_stats &&
        transfer->error_body.find("continuous_usage_stats") != std::string::npos) {
      // The server refuses per-chunk usage: ask no more, and resend this request without it
      // (it keeps its concurrency slot; the refusal is not a failure).
      shared.usage_stats_rejected.store(true);
      if (!stopping) {
        Prepared* p = transfer->request;
        recycle(transfer);
        start(*p);
        return;
      }
    }

    if (result != CURLE_OK) {
      if (record.error.empty())
        record.error = transport_error_message(result, transfer->error_buffer);
      record.success = false;
    } else if (status != 200) {
      record.error = http_error_message(status, transfer->error_body);
      record.success = false;
    } else {
      transfer->reader.finish(now);
    }
    record.done_ns = transfer->reader.saw_done() ? transfer->reader.done_ns() : now;
    emit(std::move(record));
    retire(transfer);
  }

  void collect_finished() {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      Transfer* transfer = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
      complete(transfer, message->data.result);
    }
  }

  // --- stop and drain

  void begin_stop(int64_t now_abs) {
    stopping = true;
    waiting_for_slot.store(false);
    for (; next < requests.size(); ++next) {
      record::RequestRecord record = identity_record(requests[next]);
      record.error = "not sent: stopped";
      emit(std::move(record));
    }
    double drain_s = shared.abort.load() ? 0.0 : shared.options->drain_timeout_s;
    drain_deadline_ns = now_abs + static_cast<int64_t>(std::max(0.0, drain_s) * 1e9);
  }

  void abort_in_flight() {
    int64_t now = core::mono_ns() - t0;
    for (auto& owned : transfers) {
      Transfer* transfer = owned.get();
      if (!transfer->active) continue;
      curl_multi_remove_handle(multi, transfer->easy);
      stats.sse_events += transfer->reader.events();
      long status = 0;
      curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE, &status);
      record::RequestRecord& record = transfer->record;
      record.http_status = static_cast<int>(status);
      record.success = false;
      record.error = "aborted: still running when the drain timeout after stop ended";
      record.done_ns = now;
      emit(std::move(record));
      retire(transfer);
    }
  }

  bool stop_requested() const {
    return shared.abort.load(std::memory_order_relaxed) ||
           (shared.options->stop != nullptr &&
            shared.options->stop->load(std::memory_order_relaxed));
  }

  // --- the loop

  int epoll_timeout_ms(int64_t now_abs) const {
    int64_t timeout_ns = -1;
    auto at_most = [&](int64_t ns) {
      ns = std::max<int64_t>(0, ns);
      timeout_ns = timeout_ns < 0 ? ns : std::min(timeout_ns, ns);
    };
    if (curl_due_now || more_due) at_most(0);
    if (!outbox.empty()) at_most(kOutboxRetryNs);
    if (curl_deadline_ns >= 0) at_most(curl_deadline_ns - now_abs);
    if (shared.options->stop != nullptr && !stopping) at_most(int64_t{kStopPollMs} * 1'000'000);
    if (stopping) at_most(drain_deadline_ns - now_abs);
    if (timeout_ns < 0) return -1;
    return static_cast<int>((timeout_ns + 999'999) / 1'000'000);  // never early
  }

  void run() {
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // epoll_wait timeouts to the µs, not +50 µs
    t0 = shared.t0_ns.load();
    epoll_event events[kMaxEvents];
    while (remaining > 0) {
      if (!stopping && stop_requested()) begin_stop(core::mono_ns());
      if (stopping && core::mono_ns() >= drain_deadline_ns) abort_in_flight();
      dispatch_due();
      collect_finished();
      flush_outbox();
      if (remaining == 0) break;
      arm_pace_timer();

      int ready = epoll_wait(epoll_fd, events, kMaxEvents, epoll_timeout_ms(core::mono_ns()));
      if (ready < 0 && errno != EINTR) throw_internal("epoll_wait");
      int running = 0;
      for (int i = 0; i < ready; ++i) {
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
          uint32_t flags = events[i].events;
          int action = ((flags & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                       ((flags & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                       ((flags & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
          curl_multi_socket_action(multi, static_cast<curl_socket_t>(tag), action, &running);
        }
      }
      if (curl_due_now || (curl_deadline_ns >= 0 && core::mono_ns() >= curl_deadline_ns)) {
        curl_due_now = false;
        curl_deadline_ns = -1;
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
      }
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
