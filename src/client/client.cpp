#include "client/client.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>

#include "client/curl_transport.h"
#include "client/delivery.h"
#include "client/event_loop.h"
#include "client/request_body.h"
#include "client/sse_stream.h"
#include "client/transport.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/system.h"
#include "tokenizer/tokenizer.h"

namespace servebench::client {

namespace {

double thread_cpu_seconds(double* system_s) {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  *system_s = static_cast<double>(usage.ru_stime.tv_sec) + usage.ru_stime.tv_usec * 1e-6;
  return static_cast<double>(usage.ru_utime.tv_sec) + usage.ru_utime.tv_usec * 1e-6;
}

// CPU time of the run's threads (event loops, delivery, the waiting caller): RUSAGE_THREAD,
// not RUSAGE_SELF, so an embedded simulator in the same process is not billed to the client.
struct CpuMeter {
  std::mutex mutex;
  double user_s = 0, system_s = 0;
  void add_this_thread(double user_base_s = 0, double system_base_s = 0) {
    double system = 0;
    double user = thread_cpu_seconds(&system);
    std::lock_guard lock(mutex);
    user_s += user - user_base_s;
    system_s += system - system_base_s;
  }
};

// Round-robin by intended time: each loop's share stays sorted by it. A conversation's later
// turns go to the loop of its first turn (the loop that sends a turn builds the next one).
std::vector<std::vector<const PlannedRequest*>> split_plan(const std::vector<PlannedRequest>& plan,
                                                           int loops) {
  std::vector<std::vector<const PlannedRequest*>> shares(static_cast<size_t>(loops));
  std::vector<const PlannedRequest*> ordered;
  ordered.reserve(plan.size());
  for (const PlannedRequest& request : plan) ordered.push_back(&request);
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](auto* a, auto* b) { return a->intended_ns < b->intended_ns; });
  std::unordered_map<int64_t, size_t> conversation_loop;
  size_t paced = 0;
  for (const PlannedRequest* request : ordered) {
    if (request->follows >= 0) continue;
    size_t loop = paced++ % shares.size();
    if (request->conversation >= 0) conversation_loop.emplace(request->conversation, loop);
    shares[loop].push_back(request);
  }
  for (const PlannedRequest* request : ordered) {
    if (request->follows < 0) continue;
    auto found = conversation_loop.find(request->conversation);
    // A turn without a first turn goes anywhere: its loop reports the broken link.
    shares[found != conversation_loop.end() ? found->second : 0].push_back(request);
  }
  return shares;
}

size_t paced_count(const std::vector<PlannedRequest>& plan) {
  return static_cast<size_t>(std::count_if(plan.begin(), plan.end(),
                                           [](const PlannedRequest& r) { return r.follows < 0; }));
}

}  // namespace

ClientStats run(const Endpoint& endpoint, const BodyOptions& body,
                const std::vector<PlannedRequest>& plan, const RunOptions& options,
                const tokenizer::Tokenizer& tokenizer, const RecordSink& sink) {
  validate_endpoint(endpoint);
  register_endpoint_secrets(endpoint);
  ClientStats stats;
  stats.transport = detail::use_http1_transport(endpoint, options.http_engine) ? "http1" : "curl";
  if (plan.empty()) return stats;
  core::raise_open_files_limit();  // before the loops size their connection caches by it
  // Room for a connection per request, and the embedded simulator's side of each, before t0
  // (a table grown mid-run stalled the loop for 5-20 ms; beyond the cap it grows by doubling).
  constexpr uint64_t kSpareDescriptors = 256, kMaxReservedDescriptors = 65'536;
  core::reserve_descriptor_table(
      std::min<uint64_t>(2 * plan.size() + kSpareDescriptors, kMaxReservedDescriptors));

  detail::RunShared shared;
  shared.endpoint = &endpoint;
  shared.body = &body;
  shared.options = &options;
  shared.extra_body = detail::parse_extra_body(body.extra_body_json);
  shared.concurrency_cap = std::max(0, options.max_concurrency);
  shared.conversation_cap = std::max(0, options.max_active_conversations);

  int loop_count =
      std::clamp(options.io_threads, 1, static_cast<int>(std::max<size_t>(1, paced_count(plan))));
  std::vector<std::unique_ptr<detail::EventLoop>> loops;
  for (auto& share : split_plan(plan, loop_count))
    loops.push_back(std::make_unique<detail::EventLoop>(shared, std::move(share)));
  for (auto& loop : loops) {
    shared.loops.push_back(loop.get());
    loop->prepare();  // bodies and handles before t0: the send path does no JSON work
  }

  detail::Delivery delivery(shared, options, tokenizer, sink);
  shared.delivery = &delivery;
  CpuMeter cpu;
  double caller_system_base = 0;
  double caller_user_base = thread_cpu_seconds(&caller_system_base);
  const int64_t t0 = options.t0_gate ? options.t0_gate() : core::mono_ns();
  shared.t0_ns.store(t0);
  if (options.live) options.live->t0_mono_ns.store(t0, std::memory_order_relaxed);
  stats.t0_mono_ns = t0;

  std::vector<std::thread> threads;
  threads.reserve(loops.size());
  for (auto& loop : loops) {
    threads.emplace_back([&shared, &cpu, loop = loop.get()] {
      double system_base = 0;
      double user_base = thread_cpu_seconds(&system_base);
      try {
        loop->run();
      } catch (...) {
        std::lock_guard lock(shared.mutex);
        if (!shared.failure) shared.failure = std::current_exception();
        shared.abort.store(true);
      }
      cpu.add_this_thread(user_base, system_base);
      {
        std::lock_guard lock(shared.mutex);
        ++shared.loops_finished;
      }
      shared.ready.notify_one();
      if (shared.abort.load())
        for (detail::EventLoop* other : shared.loops) other->wake();
    });
  }

  // Records are delivered by the loops in their idle time and by a thread that yields to them
  // (nice 19 in short slices): on a shared core the sink's work (JSON lines, file writes) then
  // waits for the event loops instead of delaying their sends and reads (docs/performance.md).
  std::thread deliverer([&] {
    double system_base = 0;
    double user_base = thread_cpu_seconds(&system_base);
    delivery.run_thread(static_cast<int>(loops.size()));
    cpu.add_this_thread(user_base, system_base);
  });
  deliverer.join();
  for (std::thread& thread : threads) thread.join();
  cpu.add_this_thread(caller_user_base, caller_system_base);

  if (shared.failure) std::rethrow_exception(shared.failure);
  if (delivery.sink_failure()) std::rethrow_exception(delivery.sink_failure());

  stats.duration_s = static_cast<double>(delivery.last_done_ns()) * 1e-9;
  stats.cpu_user_s = cpu.user_s;
  stats.cpu_system_s = cpu.system_s;
  detail::DelayHistogram read_delay;
  for (auto& loop : loops) {
    const detail::LoopStats& s = loop->stats();
    read_delay.merge(s.read_delay);
    stats.reads_stamped_at_read += s.reads_stamped_at_read;
    stats.max_loop_lag_ns = std::max(stats.max_loop_lag_ns, s.max_loop_lag_ns);
    stats.bytes_received += s.bytes_received;
    stats.sse_events += s.sse_events;
    stats.connections_opened += s.connections_opened;
  }
  stats.kernel_stamped_reads = read_delay.count();
  const bool kernel = stats.kernel_stamped_reads > 0;
  const bool read = stats.reads_stamped_at_read > 0;
  stats.arrival_clock = kernel && read ? "mixed"
                        : kernel       ? "kernel"
                        : read         ? "read"
                        // Nothing was read: what the run would have used.
                        : options.kernel_arrival_times && stats.transport == "http1" ? "kernel"
                                                                                     : "read";
  stats.read_delay_p50_ns = read_delay.quantile_ns(0.50);
  stats.read_delay_p99_ns = read_delay.quantile_ns(0.99);
  stats.read_delay_p999_ns = read_delay.quantile_ns(0.999);
  stats.read_delay_max_ns = read_delay.max_ns();
  return stats;
}

namespace {

size_t collect_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  size_t length = size * count;
  if (body->size() < 64 * 1024) body->append(data, std::min(length, 64 * 1024 - body->size()));
  return length;
}

// libcurl calls this about once a second even while nothing arrives: a non-zero return ends
// the transfer (CURLE_ABORTED_BY_CALLBACK), so SIGINT/SIGTERM stop a ready check that waits on
// a server that accepted and never answers.
int abort_when_interrupted(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return core::interrupted() ? 1 : 0;
}

struct EasyHandle {
  CURL* easy = curl_easy_init();
  curl_slist* headers = nullptr;
  ~EasyHandle() {
    curl_slist_free_all(headers);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

}  // namespace

void wait_until_ready(const Endpoint& endpoint, double timeout_s) {
  validate_endpoint(endpoint);
  register_endpoint_secrets(endpoint);
  detail::ensure_curl_initialized();
  const std::string body = detail::build_ready_check_body(endpoint);
  const int64_t deadline = core::mono_ns() + detail::timeout_ns(timeout_s, 0);
  std::string last_failure;
  for (int attempt = 0;; ++attempt) {
    int64_t retry_after_ns = 0;  // the server's Retry-After on a 503 or 429, when it sent one
    EasyHandle handle;
    if (handle.easy == nullptr)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_easy_init failed");
    handle.headers = detail::build_base_headers(endpoint);
    std::string reply;
    char error_buffer[CURL_ERROR_SIZE] = {};
    Endpoint bounded = endpoint;
    // One attempt may not outlive the whole check (but gets at least a few seconds).
    double left_s = static_cast<double>(deadline - core::mono_ns()) * 1e-9;
    // (Not std::clamp: its bounds may cross when the endpoint's timeout is under 5 s.)
    bounded.timeout_s = std::min(std::max(left_s, 5.0), endpoint.timeout_s);
    detail::set_common_options(handle.easy, bounded, 16 * 1024);
    curl_easy_setopt(handle.easy, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(handle.easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(handle.easy, CURLOPT_HTTPHEADER, handle.headers);
    curl_easy_setopt(handle.easy, CURLOPT_WRITEFUNCTION, &collect_body);
    curl_easy_setopt(handle.easy, CURLOPT_WRITEDATA, &reply);
    curl_easy_setopt(handle.easy, CURLOPT_ERRORBUFFER, error_buffer);
    curl_easy_setopt(handle.easy, CURLOPT_XFERINFOFUNCTION, &abort_when_interrupted);
    curl_easy_setopt(handle.easy, CURLOPT_NOPROGRESS, 0L);
    core::throw_if_interrupted("ready check");
    CURLcode result = curl_easy_perform(handle.easy);
    core::throw_if_interrupted("ready check");
    long status = 0;
    curl_easy_getinfo(handle.easy, CURLINFO_RESPONSE_CODE, &status);

    if (result != CURLE_OK) {
      last_failure = detail::transport_error_message(result, error_buffer);
    } else if (status == 200) {
      detail::ParseScratch scratch;
      detail::StreamReader reader(&scratch);
      record::RequestRecord record;
      reader.begin(&record);
      reader.feed(reply.data(), reply.size(), 0);
      reader.finish(0);
      if (record.success) return;
      // A broken stream may be a fault of this one answer (an injected or a real one): retry.
      last_failure = "the server answered 200 but its stream is not usable: " + record.error;
    } else {
      last_failure = detail::http_error_message(status, reply);
      // A client error (wrong model, bad field) will not go away by waiting; 408/429 may.
      if (status >= 400 && status < 500 && status != 408 && status != 429)
        throw core::Error(core::ErrorKind::kNetwork, "ready check", last_failure);
      // Retry-After (seconds or an HTTP date; libcurl reads both) is when the server expects to
      // be ready; asking sooner only adds load to a server that said it is busy.
      curl_off_t retry_after_s = 0;
      if ((status == 503 || status == 429) &&
          curl_easy_getinfo(handle.easy, CURLINFO_RETRY_AFTER, &retry_after_s) == CURLE_OK &&
          retry_after_s > 0)
        retry_after_ns = detail::timeout_ns(static_cast<double>(retry_after_s), 0);
    }
    if (core::mono_ns() >= deadline) break;
    // vLLM's ready check polls every few seconds; a short back-off finds a starting server sooner.
    int64_t pause_ns =
        std::min<int64_t>(1'000'000'000, int64_t{100'000'000} << std::min(attempt, 3));
    if (retry_after_ns > 0) pause_ns = retry_after_ns;  // capped by the check's timeout below
    pause_ns = std::min(pause_ns, deadline - core::mono_ns());
    if (pause_ns > 0 && !core::sleep_unless_interrupted(pause_ns))
      core::throw_if_interrupted("ready check");
  }
  throw core::Error(core::ErrorKind::kNetwork, "ready check",
                    "the server did not become ready within " + detail::seconds_text(timeout_s) +
                        " s; last failure: " + last_failure);
}

}  // namespace servebench::client
