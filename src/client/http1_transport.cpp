// servebench's own HTTP/1.1 transport for plain http:// targets. The same epoll set as the
// loop; per connection one recv per readiness event into one buffer shared by the loop, the
// response parsed in place (http1_response.h), the body de-chunked straight into the
// exchange's SSE reader. Requests go out with one sendmsg (head + prebuilt body); connections
// are kept alive and reused, most recently used first.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <optional>

#include "client/arrival_clock.h"
#include "client/event_loop.h"
#include "client/http1_address.h"
#include "client/http1_response.h"
#include "client/sse_stream.h"
#include "client/transport.h"
#include "core/clock.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

// One read buffer per loop: a read never holds more than one readiness event's bytes.
constexpr size_t kReadBufferBytes = 64 * 1024;

struct Connection;

struct Http1Exchange : Exchange {
  using Exchange::Exchange;
  Connection* connection = nullptr;
  uint64_t serial = 0;  // which start() of this exchange a timeout or deferred end belongs to
  bool retried = false;
};

struct Connection {
  enum class State { kConnecting, kSending, kReceiving, kIdle, kClosed };
  int fd = -1;
  State state = State::kClosed;
  uint32_t events = 0;  // what epoll watches for it
  size_t address = 0;   // index of the address being tried
  int requests_served = 0;
  Http1Exchange* exchange = nullptr;
  std::string head;  // the request head being sent
  size_t sent = 0;   // bytes of head + body written
  bool send_done = false;
  bool response_started = false;
  bool kernel_stamps = false;   // the kernel stamps what arrives (SO_TIMESTAMPNS)
  int64_t last_arrival_ns = 0;  // arrivals on one connection never go back in time
  Http1Response response;
};

// Routes the parser's output into the exchange being read, stamped with the read's time.
struct ExchangeSink final : ResponseSink {
  Http1Exchange* exchange;
  int64_t now_ns;
  ExchangeSink(Http1Exchange* e, int64_t now) : exchange(e), now_ns(now) {}
  void on_status(int status) override { exchange->status = status; }
  void on_body(const char* data, size_t length) override {
    exchange->on_body(data, length, now_ns);
  }
};

class Http1Transport final : public Transport {
 public:
  explicit Http1Transport(TransportContext& context)
      : context_(context), read_buffer_(kReadBufferBytes) {
    const Endpoint& endpoint = *context.endpoint;
    if (!parse_http_url(endpoint.url, &url_))
      throw core::Error(core::ErrorKind::kUsage, "--http-engine",
                        "the http1 engine serves plain http://host[:port]/path URLs only; use "
                        "curl for " +
                            one_line_message(endpoint.url, 100));
    timeout_ns_ = timeout_ns(endpoint.timeout_s, 0.001);
    std::vector<std::string> lines = base_header_lines(endpoint);
    if (!has_header(lines, "host")) lines.insert(lines.begin(), "Host: " + url_.host_header);
    if (!has_header(lines, "accept")) lines.push_back("Accept: */*");
    // User info in the URL, as libcurl sends it: unless an Authorization header is given.
    if (const std::string basic = basic_auth_value(endpoint.url);
        !basic.empty() && !has_header(lines, "authorization"))
      lines.push_back("Authorization: " + basic);
    for (const std::string& line : lines) fixed_headers_ += line + "\r\n";
    addresses_ = resolve_http_host(url_, &resolve_error_);
    if (context.kernel_timestamps) stamps_on_.emplace();
  }

  ~Http1Transport() override {
    for (auto& connection : connections_)
      if (connection->fd >= 0) ::close(connection->fd);
  }

  std::unique_ptr<Exchange> make_exchange(ParseScratch* scratch) override {
    return std::make_unique<Http1Exchange>(scratch);
  }

  void start(Exchange& base) override {
    auto& exchange = static_cast<Http1Exchange&>(base);
    exchange.serial = ++serial_;
    exchange.retried = false;
    timeouts_.push_back({core::mono_ns() + timeout_ns_, &exchange, exchange.serial});
    in_start_ = true;
    send_on_a_connection(exchange);
    in_start_ = false;
  }

  bool has_idle_connection() const override { return !idle_.empty(); }

  void prefetch(uint64_t tag) const override {
    const auto* connection = reinterpret_cast<const char*>(tag);
    for (size_t line = 0; line < sizeof(Connection); line += 64)
      __builtin_prefetch(connection + line);
  }

  void on_ready(uint64_t tag, uint32_t events) override {
    auto* connection = reinterpret_cast<Connection*>(tag);
    switch (connection->state) {
      case Connection::State::kConnecting:
        finish_connect(connection);
        break;
      case Connection::State::kSending:
        if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
          receive(connection);  // an early answer (or the error that ends the send)
          if (connection->state == Connection::State::kSending) send_request(connection);
        } else {
          send_request(connection);
        }
        break;
      case Connection::State::kReceiving:
        receive(connection);
        break;
      case Connection::State::kIdle:
        close_connection(connection);  // the server closed it (or sent bytes nobody asked for)
        break;
      case Connection::State::kClosed:
        break;  // closed earlier in this batch of events
    }
  }

  void on_time(int64_t now_ns) override {
    while (!timeouts_.empty() && timeouts_.front().deadline_ns <= now_ns) {
      Timeout timeout = timeouts_.front();
      timeouts_.pop_front();
      Http1Exchange& exchange = *timeout.exchange;
      if (!exchange.active || exchange.serial != timeout.serial || exchange.connection == nullptr)
        continue;
      Connection* connection = exchange.connection;
      fail(connection, "transport: no complete response within the request timeout of " +
                           seconds_text(static_cast<double>(timeout_ns_) * 1e-9) + " s (" +
                           std::to_string(connection->response.body_bytes()) +
                           " body bytes received)");
    }
  }

  void collect() override {
    // Connections closed during the last batch of events may be reused from now on.
    for (Connection* connection : closed_) free_.push_back(connection);
    closed_.clear();
    if (deferred_.empty()) return;
    std::vector<Deferred> ends;
    ends.swap(deferred_);
    for (Deferred& end : ends) {
      if (end.exchange->active && end.exchange->serial == end.serial)
        context_.finished(*end.exchange, std::move(end.message));
    }
  }

  int64_t next_deadline_ns() override {
    if (!deferred_.empty()) return 0;
    while (!timeouts_.empty()) {
      const Timeout& front = timeouts_.front();
      if (front.exchange->active && front.exchange->serial == front.serial)
        return front.deadline_ns;
      timeouts_.pop_front();  // that request already ended
    }
    return -1;
  }

  void abort(Exchange& base) override {
    auto& exchange = static_cast<Http1Exchange&>(base);
    if (Connection* connection = exchange.connection) {
      detach(connection);
      close_connection(connection);
    }
  }

 private:
  struct Timeout {
    int64_t deadline_ns;
    Http1Exchange* exchange;
    uint64_t serial;
  };
  struct Deferred {
    Http1Exchange* exchange;
    uint64_t serial;
    std::string message;
  };

  // --- the exchange's way to a connection

  void send_on_a_connection(Http1Exchange& exchange) {
    Connection* connection = nullptr;
    if (!idle_.empty()) {
      connection = idle_.back();
      idle_.pop_back();
    } else {
      connection = open_connection(exchange);
      if (connection == nullptr) return;  // failed and reported
    }
    attach(connection, exchange);
    if (connection->state == Connection::State::kIdle ||
        connection->state == Connection::State::kSending) {
      connection->state = Connection::State::kSending;
      send_request(connection);
    }
  }

  Connection* new_connection() {
    if (!free_.empty()) {
      Connection* connection = free_.back();
      free_.pop_back();
      return connection;
    }
    connections_.push_back(std::make_unique<Connection>());
    return connections_.back().get();
  }

  // A connected or connecting socket, or nullptr when every address failed at once (the
  // exchange has then been failed).
  Connection* open_connection(Http1Exchange& exchange) {
    if (addresses_.empty()) {
      end_exchange(exchange, resolve_error_);
      return nullptr;
    }
    Connection* connection = new_connection();
    connection->address = preferred_address_;
    connection->requests_served = 0;
    std::string error = connect_from(connection, connection->address);
    if (!error.empty()) {
      free_.push_back(connection);
      end_exchange(exchange, error);
      return nullptr;
    }
    return connection;
  }

  // Tries the addresses from `first` on; "" once one connects or is connecting.
  std::string connect_from(Connection* connection, size_t first) {
    int last_errno = 0;
    for (size_t i = first; i < addresses_.size(); ++i) {
      const SocketAddress& address = addresses_[i];
      int fd = ::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        last_errno = errno;
        continue;
      }
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      connection->kernel_stamps = context_.kernel_timestamps && enable_kernel_timestamps(fd);
      connection->last_arrival_ns = 0;
      int result =
          ::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length);
      if (result != 0 && errno != EINPROGRESS) {
        last_errno = errno;
        ::close(fd);
        continue;
      }
      connection->fd = fd;
      connection->address = i;
      connection->state =
          result == 0 ? Connection::State::kSending : Connection::State::kConnecting;
      connection->events = 0;
      watch(connection,
            connection->state == Connection::State::kConnecting ? EPOLLOUT : EPOLLIN | EPOLLOUT);
      if (result == 0) connected(connection);
      return "";
    }
    return connect_error(last_errno);
  }

  std::string connect_error(int error) const {
    return "transport: connect to " + url_.host_header + " failed: " + std::strerror(error);
  }

  void connected(Connection* connection) {
    preferred_address_ = connection->address;
    ++context_.stats->connections_opened;
  }

  void finish_connect(Connection* connection) {
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(connection->fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error == EINPROGRESS || error == EALREADY) return;
    if (error != 0) {
      ::close(connection->fd);
      connection->fd = -1;
      connection->events = 0;
      std::string failure = connect_error(error);
      if (connection->address + 1 < addresses_.size()) {
        std::string next = connect_from(connection, connection->address + 1);
        if (next.empty()) return;  // the next address is connecting
        failure = std::move(next);
      }
      Http1Exchange* exchange = detach(connection);
      connection->state = Connection::State::kClosed;
      closed_.push_back(connection);
      end_exchange(*exchange, std::move(failure));
      return;
    }
    connected(connection);
    connection->state = Connection::State::kSending;
    send_request(connection);
  }

  void attach(Connection* connection, Http1Exchange& exchange) {
    connection->exchange = &exchange;
    exchange.connection = connection;
    const Prepared& request = *exchange.request;
    std::string& head = connection->head;
    head.clear();
    head += "POST ";
    head += url_.target;
    head += " HTTP/1.1\r\n";
    head += fixed_headers_;
    head += request.request_id_header;
    head += "\r\nContent-Length: ";
    head += std::to_string(request.body.json.size());
    head += "\r\n\r\n";
    connection->sent = 0;
    connection->send_done = false;
    connection->response_started = false;
    connection->response.reset();
  }

  Http1Exchange* detach(Connection* connection) {
    Http1Exchange* exchange = connection->exchange;
    connection->exchange = nullptr;
    if (exchange != nullptr) exchange->connection = nullptr;
    return exchange;
  }

  void watch(Connection* connection, uint32_t events) {
    if (connection->events == events) return;
    epoll_event event{};
    event.events = events;
    event.data.u64 = reinterpret_cast<uint64_t>(connection);
    int op = connection->events == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    epoll_ctl(context_.epoll_fd, op, connection->fd, &event);
    connection->events = events;
  }

  // --- sending and receiving

  void send_request(Connection* connection) {
    const std::string& body = connection->exchange->request->body.json;
    const std::string& head = connection->head;
    size_t total = head.size() + body.size();
    while (connection->sent < total) {
      iovec parts[2];
      int count = 0;
      if (connection->sent < head.size()) {
        parts[count++] = {const_cast<char*>(head.data()) + connection->sent,
                          head.size() - connection->sent};
        parts[count++] = {const_cast<char*>(body.data()), body.size()};
      } else {
        size_t offset = connection->sent - head.size();
        parts[count++] = {const_cast<char*>(body.data()) + offset, body.size() - offset};
      }
      msghdr message{};
      message.msg_iov = parts;
      message.msg_iovlen = static_cast<size_t>(count);
      ssize_t written = ::sendmsg(connection->fd, &message, MSG_NOSIGNAL);
      if (written < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          watch(connection, EPOLLIN | EPOLLOUT);
          return;
        }
        lost(connection, std::string("transport: send failed: ") + std::strerror(errno));
        return;
      }
      connection->sent += static_cast<size_t>(written);
    }
    connection->send_done = true;
    connection->state = Connection::State::kReceiving;
    watch(connection, EPOLLIN);
  }

  void receive(Connection* connection) {
    const StampedRead read = receive_stamped(connection->fd, read_buffer_.data(),
                                             read_buffer_.size(), connection->kernel_stamps);
    const ssize_t got = read.bytes;
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      lost(connection, std::string("transport: receive failed: ") + std::strerror(errno));
      return;
    }
    if (got == 0) {
      if (!connection->response_started) {
        lost(connection, "transport: the server closed the connection without a response");
        return;
      }
      if (connection->response.end_of_stream() == Http1Response::Progress::kComplete) {
        complete(connection, /*reuse=*/false);
      } else {
        fail(connection, "transport: " + connection->response.error());
      }
      return;
    }
    context_.stats->bytes_received += static_cast<uint64_t>(got);
    connection->response_started = true;
    connection->last_arrival_ns = std::max(connection->last_arrival_ns, read.arrival_ns);
    if (read.kernel_stamp) {
      context_.stats->read_delay.add(read.read_ns - connection->last_arrival_ns);
    } else {
      ++context_.stats->reads_stamped_at_read;
    }
    ExchangeSink sink(connection->exchange, connection->last_arrival_ns - context_.t0_ns);
    size_t consumed = 0;
    auto size = static_cast<size_t>(got);
    switch (connection->response.feed(read_buffer_.data(), size, sink, &consumed)) {
      case Http1Response::Progress::kNeedMore:
        break;
      case Http1Response::Progress::kComplete:
        // Bytes past the response, or a request not yet fully written, leave the connection in
        // a state no next request should inherit.
        complete(connection,
                 connection->response.keep_alive() && consumed == size && connection->send_done);
        break;
      case Http1Response::Progress::kMalformed:
        fail(connection, "transport: malformed HTTP response: " + connection->response.error());
        break;
    }
  }

  // --- ends

  // The connection broke. A kept-alive connection that the server had already closed breaks
  // before any byte of the answer: send once more on a fresh connection, as curl does.
  void lost(Connection* connection, std::string message) {
    Http1Exchange* exchange = connection->exchange;
    if (!connection->response_started && connection->requests_served > 0 && !exchange->retried) {
      exchange->retried = true;
      detach(connection);
      close_connection(connection);
      send_on_a_connection(*exchange);
      return;
    }
    fail(connection, std::move(message));
  }

  void fail(Connection* connection, std::string message) {
    Http1Exchange* exchange = detach(connection);
    close_connection(connection);
    end_exchange(*exchange, std::move(message));
  }

  void complete(Connection* connection, bool reuse) {
    Http1Exchange* exchange = detach(connection);
    if (reuse) {
      ++connection->requests_served;
      connection->state = Connection::State::kIdle;
      idle_.push_back(connection);
    } else {
      close_connection(connection);
    }
    end_exchange(*exchange, "");
  }

  // Reports the end now, or at the next collect() when inside start().
  void end_exchange(Http1Exchange& exchange, std::string message) {
    if (in_start_) {
      deferred_.push_back({&exchange, exchange.serial, std::move(message)});
    } else {
      context_.finished(exchange, std::move(message));
    }
  }

  void close_connection(Connection* connection) {
    if (connection->state == Connection::State::kIdle) std::erase(idle_, connection);
    if (connection->fd >= 0) ::close(connection->fd);  // also leaves the epoll set
    connection->fd = -1;
    connection->events = 0;
    connection->state = Connection::State::kClosed;
    closed_.push_back(connection);
  }

  TransportContext& context_;
  HttpUrl url_;
  std::string fixed_headers_;  // every header line but x-request-id and Content-Length
  std::vector<SocketAddress> addresses_;
  std::string resolve_error_;
  size_t preferred_address_ = 0;  // the last address that connected
  int64_t timeout_ns_ = 0;
  std::vector<char> read_buffer_;
  std::optional<KernelStampsOn> stamps_on_;               // while kernel stamps are asked for
  std::vector<std::unique_ptr<Connection>> connections_;  // every connection struct made
  std::vector<Connection*> idle_;                         // kept alive, most recent last
  std::vector<Connection*> free_;                         // reusable structs
  std::vector<Connection*> closed_;  // closed in this batch of events: not reused before collect
  std::deque<Timeout> timeouts_;     // in start order = deadline order (one timeout for all)
  std::vector<Deferred> deferred_;
  uint64_t serial_ = 0;
  bool in_start_ = false;
};

}  // namespace

bool use_http1_transport(const Endpoint& endpoint, HttpEngine engine) {
  if (engine != HttpEngine::kAuto) return engine == HttpEngine::kHttp1;
  HttpUrl url;
  return parse_http_url(endpoint.url, &url);
}

std::unique_ptr<Transport> make_http1_transport(TransportContext& context) {
  return std::make_unique<Http1Transport>(context);
}

}  // namespace servebench::client::detail
