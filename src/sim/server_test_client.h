// File: sim/server_test_client.h (the simulator's socket tests only)
// A small raw HTTP/1.1 client over loopback (so that chunk boundaries, headers and closes are
// seen exactly as sent), the fast fixed-mode options and the fixture the tests share.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::sim {

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;                            // de-chunked
  std::vector<std::string> chunks;             // each HTTP chunk's data (chunked bodies)
  std::vector<int64_t> chunk_ns;               // when each chunk was complete
  bool complete = false;                       // body ended as HTTP says
  bool closed = false;                         // the server closed (or reset) the socket
  bool reset = false;                          // ECONNRESET seen

  // SSE events (`data: ` payloads) of a streamed body.
  std::vector<std::string> events() const {
    std::vector<std::string> out;
    size_t pos = 0;
    while (true) {
      size_t end = body.find("\n\n", pos);
      if (end == std::string::npos) break;
      std::string ev = body.substr(pos, end - pos);
      if (ev.rfind("data: ", 0) == 0) out.push_back(ev.substr(6));
      pos = end + 2;
    }
    return out;
  }
};

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ADD_FAILURE() << "connect failed";
    }
  }
  ~RawClient() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send_raw(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  void send_request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& extra_headers = "") {
    std::string r = method + " " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") {
      r += "content-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
           "\r\n";
    }
    r += "\r\n" + body;
    send_raw(r);
  }
  Response request(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& extra_headers = "") {
    send_request(method, path, body, extra_headers);
    return read_response();
  }

  // Reads one response; stops after `max_chunks` chunks when given (to drop mid-stream).
  Response read_response(size_t max_chunks = SIZE_MAX) {
    Response r;
    std::string line;
    if (!read_line(line, r)) return r;
    r.status = std::atoi(line.substr(9, 3).c_str());
    while (read_line(line, r) && !line.empty()) {
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value[0] == ' ') value.erase(0, 1);
      r.headers[name] = value;
    }
    if (r.headers.count("transfer-encoding")) {
      while (r.chunks.size() < max_chunks) {
        if (!read_line(line, r)) return r;
        size_t n = std::stoul(line, nullptr, 16);
        if (n == 0) {
          read_line(line, r);
          r.complete = true;
          return r;
        }
        if (!need(n + 2, r)) return r;
        r.chunks.push_back(buf_.substr(0, n));
        r.chunk_ns.push_back(core::mono_ns());
        r.body += r.chunks.back();
        EXPECT_EQ(buf_.substr(n, 2), "\r\n");
        buf_.erase(0, n + 2);
      }
      return r;
    }
    size_t len = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    if (!need(len, r)) {
      r.body = buf_;
      buf_.clear();
      return r;
    }
    r.body = buf_.substr(0, len);
    buf_.erase(0, len);
    r.complete = true;
    return r;
  }

  // True when the server closed the connection within the timeout.
  bool closed_by_server(int timeout_ms = 2000) {
    Response r;
    return !fill(r, timeout_ms) && r.closed;
  }

 private:
  bool fill(Response& r, int timeout_ms = 10000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      r.closed = true;
      r.reset = n < 0 && errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  bool need(size_t n, Response& r) {
    while (buf_.size() < n) {
      if (!fill(r)) return false;
    }
    return true;
  }
  bool read_line(std::string& line, Response& r) {
    for (;;) {
      size_t pos = buf_.find("\r\n");
      if (pos != std::string::npos) {
        line = buf_.substr(0, pos);
        buf_.erase(0, pos + 2);
        return true;
      }
      if (!fill(r)) return false;
    }
  }
  int fd_ = -1;
  std::string buf_;
};

inline Options fast_options() {
  Options o;
  o.port = 0;
  o.served_model_name = "sim-model";
  o.fixed.ttft = {5, 0};
  o.fixed.itl = {1, 0};
  o.seed = 7;
  o.max_model_len = 1000;
  return o;
}

inline std::string completion_body(int max_tokens, bool stream, const std::string& extra = "") {
  return R"({"model":"sim-model","prompt":"one two three four","max_tokens":)" +
         std::to_string(max_tokens) + R"(,"ignore_eos":true,"stream":)" +
         (stream ? "true" : "false") + extra + "}";
}

class SimServerTest : public ::testing::Test {
 protected:
  void start(Options o) {
    server_ = std::make_unique<Server>(std::move(o));
    server_->start();
    port_ = server_->port();
  }
  void SetUp() override { start(fast_options()); }
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
  std::unique_ptr<tokenizer::Tokenizer> tok_ = tokenizer::make_word_tokenizer();
};

inline double metric(const std::string& text, const std::string& sample_prefix) {
  size_t pos = text.find("\n" + sample_prefix);
  if (pos == std::string::npos) return -1;
  size_t sp = text.find(' ', text.find('}', pos));
  return std::stod(text.substr(sp + 1, text.find('\n', sp) - sp - 1));
}

}  // namespace servebench::sim
