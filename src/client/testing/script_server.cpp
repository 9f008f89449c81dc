#include "client/testing/script_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/clock.h"

namespace servebench::client::testing {

namespace {

// How often blocked threads look at the stop flag.
constexpr int kPollMs = 20;

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::string trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return std::string(text);
}

bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Parses "METHOD target HTTP/1.1\r\nName: value\r\n…" (without the blank line).
bool parse_head(std::string_view head, Request& request) {
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  size_t space1 = line.find(' ');
  size_t space2 = line.find(' ', space1 == std::string_view::npos ? 0 : space1 + 1);
  if (space1 == std::string_view::npos || space2 == std::string_view::npos) return false;
  request.method = std::string(line.substr(0, space1));
  request.target = std::string(line.substr(space1 + 1, space2 - space1 - 1));
  while (line_end != std::string_view::npos) {
    size_t start = line_end + 2;
    line_end = head.find("\r\n", start);
    line = head.substr(start, line_end == std::string_view::npos ? head.npos : line_end - start);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    // A repeated field is its values joined with ", " (RFC 9110 §5.3), so a test sees both.
    std::string& value = request.headers[lowercase(std::string(line.substr(0, colon)))];
    value += (value.empty() ? "" : ", ") + trim(line.substr(colon + 1));
  }
  return true;
}

}  // namespace

std::string Request::header(const std::string& lowercase_name) const {
  auto found = headers.find(lowercase_name);
  return found == headers.end() ? std::string() : found->second;
}

Reply& Reply::then(std::string bytes, int delay_ms) {
  pieces.push_back(Piece{delay_ms, std::move(bytes)});
  return *this;
}

std::string status_line(int status) {
  const char* reason = "Status";
  switch (status) {
    case 200:
      reason = "OK";
      break;
    case 400:
      reason = "Bad Request";
      break;
    case 401:
      reason = "Unauthorized";
      break;
    case 404:
      reason = "Not Found";
      break;
    case 422:
      reason = "Unprocessable Entity";
      break;
    case 429:
      reason = "Too Many Requests";
      break;
    case 500:
      reason = "Internal Server Error";
      break;
    case 503:
      reason = "Service Unavailable";
      break;
    default:
      break;
  }
  return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
}

std::string http_chunk(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + std::string(data) + "\r\n";
}

std::string sse_head(int status) {
  return status_line(status) +
         "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
         "Transfer-Encoding: chunked\r\n\r\n";
}

Reply json_reply(int status, const std::string& body) {
  Reply reply;
  reply.then(status_line(status) + "Content-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body);
  return reply;
}

Reply sse_reply(const std::vector<std::string>& events, int delay_ms) {
  Reply reply;
  reply.then(sse_head());
  for (const std::string& event : events)
    reply.then(http_chunk("data: " + event + "\n\n"), delay_ms);
  reply.then(std::string(kLastChunk));
  return reply;
}

ScriptServer::ScriptServer(Script script, Loopback loopback)
    : script_(std::move(script)), loopback_(loopback) {
  const bool v6 = loopback == Loopback::kIpv6;
  listen_fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("script server: socket failed");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (v6) ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  sockaddr_storage address{};
  socklen_t length = 0;
  if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&address);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_loopback;
    length = sizeof(sockaddr_in6);
  } else {
    auto* in4 = reinterpret_cast<sockaddr_in*>(&address);
    in4->sin_family = AF_INET;
    in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    length = sizeof(sockaddr_in);
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(listen_fd_, 128) != 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(listen_fd_);
    throw std::runtime_error(std::string("script server: bind/listen failed: ") +
                             std::strerror(error));
  }
  port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&address)->sin6_port
                   : reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ScriptServer::~ScriptServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  stop_cv_.notify_all();
  acceptor_.join();  // after this, workers_ no longer grows
  for (std::thread& worker : workers_) worker.join();
  ::close(listen_fd_);
}

std::string ScriptServer::url(const std::string& path) const {
  const char* host = loopback_ == Loopback::kIpv6 ? "[::1]" : "127.0.0.1";
  return "http://" + std::string(host) + ":" + std::to_string(port_) + path;
}

std::vector<Request> ScriptServer::requests() const {
  std::lock_guard lock(mutex_);
  return requests_;
}

bool ScriptServer::pause(int ms) {
  if (ms <= 0) return !stopping();
  std::unique_lock lock(mutex_);
  return !stop_cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping(); });
}

void ScriptServer::accept_loop() {
  while (!stopping()) {
    pollfd waiting{listen_fd_, POLLIN, 0};
    if (::poll(&waiting, 1, kPollMs) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int connection = ++connections_accepted_;
    workers_.emplace_back([this, fd, connection] { serve(fd, connection); });
  }
}

void ScriptServer::serve(int fd, int connection) {
  std::string buffer;
  char data[16 * 1024];
  // Reads until `buffer` holds at least `size` bytes; false on close, error or stop.
  auto fill = [&](size_t size) {
    while (buffer.size() < size) {
      if (stopping()) return false;
      pollfd waiting{fd, POLLIN, 0};
      int ready = ::poll(&waiting, 1, kPollMs);
      if (ready < 0 && errno != EINTR) return false;
      if (ready <= 0) continue;
      ssize_t n = ::recv(fd, data, sizeof data, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer.append(data, static_cast<size_t>(n));
    }
    return true;
  };

  bool keep_open = true;
  while (keep_open) {
    size_t head_end;
    while ((head_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!fill(buffer.size() + 1)) {
        keep_open = false;
        break;
      }
    }
    if (!keep_open) break;
    Request request;
    request.connection = connection;
    if (!parse_head(std::string_view(buffer).substr(0, head_end), request)) break;
    size_t body_size = 0;
    if (std::string length = request.header("content-length"); !length.empty())
      body_size = std::strtoul(length.c_str(), nullptr, 10);
    if (!fill(head_end + 4 + body_size)) break;
    request.body = buffer.substr(head_end + 4, body_size);
    buffer.erase(0, head_end + 4 + body_size);
    request.received_ns = core::mono_ns();

    int open = ++open_;
    for (int seen = max_open_.load();
         open > seen && !max_open_.compare_exchange_weak(seen, open);) {
    }
    {
      std::lock_guard lock(mutex_);
      request.number = requests_.size();
      requests_.push_back(request);
    }

    Reply reply = script_(request);
    bool counted = true;
    for (size_t i = 0; i < reply.pieces.size() && keep_open; ++i) {
      if (!pause(reply.pieces[i].delay_ms)) keep_open = false;
      if (i + 1 == reply.pieces.size()) {
        --open_;
        counted = false;
      }
      if (keep_open && !send_all(fd, reply.pieces[i].bytes)) keep_open = false;
    }
    if (counted) --open_;
    if (reply.close) keep_open = false;
  }
  ::close(fd);
}

}  // namespace servebench::client::testing
