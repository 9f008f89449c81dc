// File: client/testing/script_server.h (test support for the client part)
// A tiny scripted HTTP/1.1 server on 127.0.0.1 for the client's tests: real loopback sockets, one
// thread per connection, keep-alive. Each request (head + Content-Length body) is recorded, then
// answered with the raw bytes a script returns for it: status line, headers and body exactly as
// given (chunked or not), written piece by piece with optional pauses, optionally followed by a
// close (abrupt when the body is incomplete). It does not validate the requests it reads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace servebench::client::testing {

struct Request {
  size_t number = 0;        // arrival order over the server's life, from 0
  int connection = 0;       // the connection it came on, from 1 in accept order
  int64_t received_ns = 0;  // core::mono_ns() when head and body were complete
  std::string method;
  std::string target;
  // Names lowercased, values trimmed; a repeated field's values joined with ", ".
  std::map<std::string, std::string> headers;
  std::string body;

  // The header's value, "" when absent.
  std::string header(const std::string& lowercase_name) const;
};

struct Reply {
  struct Piece {
    int delay_ms = 0;  // pause before writing these bytes
    std::string bytes;
  };
  std::vector<Piece> pieces;
  bool close = false;  // close the connection after the last piece

  Reply& then(std::string bytes, int delay_ms = 0);
};

// Raw HTTP building blocks.
std::string status_line(int status);            // "HTTP/1.1 200 OK\r\n"
std::string http_chunk(std::string_view data);  // one chunk of a chunked body
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";
// Head of a chunked text/event-stream reply.
std::string sse_head(int status = 200);
// A complete reply with a Content-Length body.
Reply json_reply(int status, const std::string& body);
// A chunked SSE reply: head, then one chunk per event ("data: <event>\n\n"), each after
// `delay_ms`, then the last chunk.
Reply sse_reply(const std::vector<std::string>& events, int delay_ms = 0);

class ScriptServer {
 public:
  using Script = std::function<Reply(const Request&)>;

  // Where it listens: 127.0.0.1, or ::1 only (IPV6_V6ONLY), for name-resolution tests.
  enum class Loopback { kIpv4, kIpv6 };

  // Listens at once; `script` is called from connection threads (one call at a time per
  // connection, possibly concurrently across connections). Throws std::runtime_error when it
  // cannot listen (kIpv6 on a machine without an IPv6 loopback).
  explicit ScriptServer(Script script, Loopback loopback = Loopback::kIpv4);
  // Stops accepting, cuts pauses short, closes every connection and joins its threads.
  ~ScriptServer();
  ScriptServer(const ScriptServer&) = delete;
  ScriptServer& operator=(const ScriptServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& path = "/v1/completions") const;

  std::vector<Request> requests() const;  // every request read so far, in arrival order
  int connections_accepted() const { return connections_accepted_.load(); }
  // Most requests open at once: read in full and not yet answered. A request stops counting
  // just before the last piece of its reply is written, so a client that reacts to the end of
  // one reply by sending another is never counted twice.
  int max_open_requests() const { return max_open_.load(); }

 private:
  void accept_loop();
  void serve(int fd, int connection);
  // Sleeps up to `ms`; false when the server is stopping.
  bool pause(int ms);
  bool stopping() const { return stopping_.load(); }

  Script script_;
  int listen_fd_ = -1;
  int port_ = 0;
  Loopback loopback_ = Loopback::kIpv4;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_accepted_{0};
  std::atomic<int> open_{0};
  std::atomic<int> max_open_{0};

  mutable std::mutex mutex_;
  std::condition_variable stop_cv_;
  std::vector<Request> requests_;
  std::vector<std::thread> workers_;  // touched by the accept thread, then the destructor
  std::thread acceptor_;
};

}  // namespace servebench::client::testing
