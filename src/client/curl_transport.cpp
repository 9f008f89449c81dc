#include "client/curl_transport.h"

#include <sys/epoll.h>

#include <algorithm>
#include <mutex>

#include "client/event_loop.h"
#include "client/sse_stream.h"
#include "client/transport.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

std::once_flag curl_once;

struct CurlExchange : Exchange {
  const TransportContext* context = nullptr;
  CURL* easy = nullptr;
  curl_slist id_header{};  // x-request-id, then the shared base headers
  char error_buffer[CURL_ERROR_SIZE] = {};

  using Exchange::Exchange;
  ~CurlExchange() override {
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

// libcurl's multi-socket API: curl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION)
// and when to call it back (CURLMOPT_TIMERFUNCTION); we run the epoll set.
class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(TransportContext& context) : context_(context) {
    multi_ = curl_multi_init();
    if (multi_ == nullptr)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_multi_init failed");
    base_headers_ = build_base_headers(*context.endpoint);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlTransport::on_socket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlTransport::on_timer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    // Keep one idle connection per possible in-flight request (curl's default cache shrinks as
    // handles are removed, which would close keep-alive connections between requests).
    long connections = std::max(1L, context.max_connections);
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, connections);
    if (context.connections_capped)
      curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, connections);
    // Large read buffers for up to ~1k streams; smaller beyond so 10k streams stay in memory.
    buffer_bytes_ = connections <= 1024 ? 64 * 1024 : 16 * 1024;
  }

  ~CurlTransport() override {
    curl_multi_cleanup(multi_);
    curl_slist_free_all(base_headers_);
  }

  std::unique_ptr<Exchange> make_exchange(ParseScratch* scratch) override {
    auto exchange = std::make_unique<CurlExchange>(scratch);
    exchange->context = &context_;
    exchange->easy = curl_easy_init();
    if (exchange->easy == nullptr)
      throw core::Error(core::ErrorKind::kInternal, "client", "curl_easy_init failed");
    CURL* easy = exchange->easy;
    set_common_options(easy, *context_.endpoint, buffer_bytes_);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &CurlTransport::on_write);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, exchange.get());
    curl_easy_setopt(easy, CURLOPT_PRIVATE, exchange.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, exchange->error_buffer);
    exchange->id_header.next = base_headers_;
    return exchange;
  }

  void start(Exchange& base) override {
    auto& exchange = static_cast<CurlExchange&>(base);
    const Prepared& request = *exchange.request;
    exchange.error_buffer[0] = '\0';
    exchange.id_header.data = const_cast<char*>(request.request_id_header.c_str());
    CURL* easy = exchange.easy;
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.json.size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.json.data());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, &exchange.id_header);
    curl_multi_add_handle(multi_, easy);
    // Start it now (connect, or write on a kept-alive connection) instead of waiting for the
    // timer callback's 0 ms round through the loop.
    due_now_ = false;
    int running = 0;
    curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
  }

  void on_ready(uint64_t tag, uint32_t events) override {
    int action = ((events & EPOLLIN) ? CURL_CSELECT_IN : 0) |
                 ((events & EPOLLOUT) ? CURL_CSELECT_OUT : 0) |
                 ((events & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
    int running = 0;
    curl_multi_socket_action(multi_, static_cast<curl_socket_t>(tag), action, &running);
  }

  void on_time(int64_t now_ns) override {
    if (due_now_ || (deadline_ns_ >= 0 && now_ns >= deadline_ns_)) {
      due_now_ = false;
      deadline_ns_ = -1;
      int running = 0;
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    }
  }

  void collect() override {
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(multi_, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      CurlExchange* exchange = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &exchange);
      CURLcode result = message->data.result;
      detach(*exchange);
      context_.finished(*exchange, result == CURLE_OK
                                       ? std::string()
                                       : transport_error_message(result, exchange->error_buffer));
    }
  }

  int64_t next_deadline_ns() override { return due_now_ ? 0 : deadline_ns_; }

  void abort(Exchange& base) override { detach(static_cast<CurlExchange&>(base)); }

 private:
  // Out of the multi handle, with what curl knew about it copied into the exchange.
  void detach(CurlExchange& exchange) {
    curl_multi_remove_handle(multi_, exchange.easy);
    long connects = 0;
    curl_easy_getinfo(exchange.easy, CURLINFO_NUM_CONNECTS, &connects);
    context_.stats->connections_opened += static_cast<uint64_t>(std::max(0L, connects));
    long status = 0;
    curl_easy_getinfo(exchange.easy, CURLINFO_RESPONSE_CODE, &status);
    exchange.status = static_cast<int>(status);
  }

  static int on_socket(CURL*, curl_socket_t fd, int what, void* user, void* socket_data) {
    auto* self = static_cast<CurlTransport*>(user);
    int epoll_fd = self->context_.epoll_fd;
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      return 0;
    }
    epoll_event event{};
    event.events =
        ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    event.data.u64 = static_cast<uint64_t>(fd);
    if (socket_data == nullptr) {
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0 && errno == EEXIST)
        epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
      curl_multi_assign(self->multi_, fd, self);  // mark as registered
    } else {
      epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &event);
    }
    return 0;
  }

  static int on_timer(CURLM*, long timeout_ms, void* user) {
    auto* self = static_cast<CurlTransport*>(user);
    if (timeout_ms < 0) {
      self->deadline_ns_ = -1;
    } else if (timeout_ms == 0) {
      self->due_now_ = true;
    } else {
      self->deadline_ns_ = core::mono_ns() + int64_t{timeout_ms} * 1'000'000;
    }
    return 0;
  }

  static size_t on_write(char* data, size_t size, size_t count, void* user) {
    auto* exchange = static_cast<CurlExchange*>(user);
    size_t length = size * count;
    const TransportContext& context = *exchange->context;
    context.stats->bytes_received += length;
    ++context.stats->reads_stamped_at_read;  // libcurl does the reads: no kernel stamp
    if (!exchange->body_started) {
      long status = 0;
      curl_easy_getinfo(exchange->easy, CURLINFO_RESPONSE_CODE, &status);
      exchange->status = static_cast<int>(status);
    }
    exchange->on_body(data, length, core::mono_ns() - context.t0_ns);
    return length;
  }

  TransportContext& context_;
  CURLM* multi_ = nullptr;
  curl_slist* base_headers_ = nullptr;
  long buffer_bytes_ = 64 * 1024;
  int64_t deadline_ns_ = -1;  // absolute; -1 = no curl timeout pending
  bool due_now_ = false;
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
  std::vector<std::string> lines = base_header_lines(endpoint);
  lines.insert(lines.begin() + 1, "Expect:");
  for (const std::string& line : lines) {
    curl_slist* grown = curl_slist_append(list, line.c_str());
    if (grown == nullptr) {
      curl_slist_free_all(list);
      throw core::Error(core::ErrorKind::kInternal, "client", "out of memory building headers");
    }
    list = grown;
  }
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
                   static_cast<long>(timeout_ns(endpoint.timeout_s, 0.001) / 1'000'000));
  if (endpoint.insecure) {
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  // A private CA (libcurl copies the path).
  if (const std::string ca_file = client::ca_file_for(endpoint); !ca_file.empty())
    curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file.c_str());
  // Over TLS, wait for a connection that may multiplex (HTTP/2) rather than open another.
  if (endpoint.url.rfind("https://", 0) == 0) curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
}

std::string transport_error_message(CURLcode code, const char* error_buffer) {
  std::string message = std::string("transport: ") + curl_easy_strerror(code);
  if (error_buffer != nullptr && error_buffer[0] != '\0')
    message += std::string(": ") + error_buffer;
  return one_line_message(message);
}

std::unique_ptr<Transport> make_curl_transport(TransportContext& context) {
  ensure_curl_initialized();
  return std::make_unique<CurlTransport>(context);
}

}  // namespace servebench::client::detail
