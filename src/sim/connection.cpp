// A connection's HTTP: reading requests with Beast, routing them, plain replies, and the socket
// writes every reply and stream goes through (non-blocking send, the rest buffered until the
// socket is writable). While a generation runs, the socket is watched for the client leaving.
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <ctime>

#include "core/clock.h"
#include "sim/deployment_state.h"
#include "sim/front.h"

namespace servebench::sim::detail {
namespace {

const char* status_text(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Request Entity Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
  }
  return "Error";
}

}  // namespace

std::string Front::metrics_text() const {
  std::vector<const FrontMetrics*> per_thread;
  for (const auto& t : threads) per_thread.push_back(&t->metrics);
  if (!opts.deployment) {
    return exposition_text(opts.served_model_name, per_thread, schedule->stats());
  }
  return frontend_exposition_text(opts.served_model_name, frontend_name(), per_thread,
                                  schedule->stats()) +
         worker_exposition(*opts.deployment, opts.deployment_frontend, opts.served_model_name);
}

std::string Front::dcgm_text() const {
  return opts.deployment ? dcgm_exposition(*opts.deployment, core::mono_ns()) : std::string();
}

const std::string& Front::frontend_name() const {
  static const std::string kNone;
  return opts.deployment ? opts.deployment->spec.frontends[opts.deployment_frontend].name : kNone;
}

const std::string& IoThread::http_date() {
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  if (now != date_second) {
    date_second = now;
    time_t t = static_cast<time_t>(now);
    tm g;
    gmtime_r(&t, &g);
    char buf[64];
    size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &g);
    date.assign(buf, n);
  }
  return date;
}

void Connection::do_read() {
  parser_.emplace();
  parser_->body_limit(front().opts.max_body_bytes);
  parser_->header_limit(64 * 1024);
  http::async_read_header(
      sock_, buf_, *parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void Connection::on_header(beast::error_code ec) {
  if (state_ == State::kClosed) return;
  if (!ec && parser_->get()[http::field::expect] == "100-continue") {
    // curl waits up to a second for this before sending a large body.
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    if (::send(fd(), kContinue.data(), kContinue.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(kContinue.size())) {
      close();
      return;
    }
  }
  if (ec) {
    on_read(ec);
    return;
  }
  http::async_read(sock_, buf_, *parser_,
                   [self = shared_from_this()](beast::error_code e, size_t) { self->on_read(e); });
}

void Connection::on_read(beast::error_code ec) {
  if (state_ == State::kClosed) return;
  if (ec == http::error::end_of_stream || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
    close();
    return;
  }
  state_ = State::kBusy;
  if (ec == http::error::body_limit) {
    close_after_ = true;
    reply_error(ApiError{413, "RequestEntityTooLarge",
                         "Request body larger than the limit of " +
                             std::to_string(front().opts.max_body_bytes) + " bytes.",
                         ""});
    return;
  }
  if (ec) {
    close_after_ = true;
    reply_error(bad_request("Malformed HTTP request: " + ec.message() + "."));
    return;
  }
  handle();
}

void Connection::handle() {
  const auto& req = parser_->get();
  close_after_ = !parser_->keep_alive();
  std::string_view target(req.target().data(), req.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  auto method = req.method();
  auto need = [&](http::verb v, const char* allow) {
    if (method == v) return true;
    reply_error(ApiError{405, "MethodNotAllowed", "Method Not Allowed", ""},
                std::string("allow: ") + allow + "\r\n");
    return false;
  };
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (!need(http::verb::post, "POST")) return;
    handle_generation(path == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChat, req);
  } else if (path == "/v1/models") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "application/json",
          models_body(front().opts.served_model_name, front().opts.max_model_len,
                      static_cast<int64_t>(std::time(nullptr))));
  } else if (path == "/health") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "application/json", "");
  } else if (path == "/metrics") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "text/plain; version=0.0.4; charset=utf-8", front().metrics_text());
  } else if (path == "/dcgm/metrics" && front().opts.deployment) {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "text/plain; version=0.0.4; charset=utf-8", front().dcgm_text());
  } else if (path == "/version") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "application/json", R"({"version":"servebench-sim 0.1.0"})");
  } else if (path == "/tokenize" || path == "/detokenize") {
    if (!need(http::verb::post, "POST")) return;
    handle_tokenize(req.body(), path == "/detokenize");
  } else {
    reply_error(ApiError{404, "NotFoundError", "Not Found: " + std::string(path), ""});
  }
}

void Connection::handle_tokenize(const std::string& body, bool detokenize) {
  const auto& tok = *front().tok;
  std::vector<tokenizer::TokenId> ids;
  ApiError err;
  if (detokenize) {
    if (!parse_detokenize_request(body, front().opts.served_model_name, thread_.json, ids, err)) {
      reply_error(err);
      return;
    }
    std::string out = R"({"prompt":)";
    append_quoted(out, tok.decode(ids));
    out += '}';
    reply(200, "application/json", out);
    return;
  }
  bool strs = false;
  if (!parse_tokenize_request(body, tok, front().opts.served_model_name, thread_.json, ids, strs,
                              err)) {
    reply_error(err);
    return;
  }
  std::string out = R"({"count":)";
  append_int(out, static_cast<int64_t>(ids.size()));
  out += R"(,"max_model_len":)";
  append_int(out, front().opts.max_model_len);
  out += R"(,"tokens":[)";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ',';
    append_int(out, ids[i]);
  }
  out += R"(],"token_strs":)";
  if (strs) {
    out += '[';
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) out += ',';
      append_quoted(out, tok.token_text(ids[i]));
    }
    out += ']';
  } else {
    out += "null";
  }
  out += '}';
  reply(200, "application/json", out);
}

void Connection::reply(int status, std::string_view content_type, std::string_view body,
                       std::string_view extra_headers) {
  std::string r = http_response(status, content_type, body, extra_headers);
  state_ = State::kDraining;
  if (!write_all(r)) return;
  maybe_read();
}

bool Connection::write_all(const char* p, size_t n) {
  if (state_ == State::kClosed) return false;
  if (!outbuf_.empty()) {
    outbuf_.append(p, n);
    return buffered();
  }
  ssize_t r = ::send(fd(), p, n, MSG_NOSIGNAL);
  if (r == static_cast<ssize_t>(n)) return true;
  if (r < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      client_gone();
      return false;
    }
    r = 0;
  }
  outbuf_.append(p + r, n - static_cast<size_t>(r));
  return buffered();
}

bool Connection::buffered() {
  if (outbuf_.size() > front().opts.max_output_buffer_bytes) {
    // A client that does not read: bounded memory, and the trace says so (not "ok").
    outbuf_.clear();
    if (stream_) {
      end_stream("client_not_reading", stream_->streaming ? 200 : 0, How::kReset);
    } else {
      reset();
    }
    return false;
  }
  start_write_wait();
  return true;
}

void append_chunk(std::string& out, std::string_view payload) {
  char hex[16];
  auto r = std::to_chars(hex, hex + sizeof hex, payload.size(), 16);
  out.append(hex, r.ptr);
  out += "\r\n";
  out += payload;
  out += "\r\n";
}

bool Connection::send_event(std::string_view payload) {
  // `<hex len>\r\n<payload>\r\n`, one send.
  std::string& out = thread_.out;
  out.clear();
  append_chunk(out, payload);
  return write_all(out);
}

void Connection::start_write_wait() {
  if (write_pending_) return;
  write_pending_ = true;
  sock_.async_wait(tcp::socket::wait_write, [self = shared_from_this()](beast::error_code ec) {
    self->write_pending_ = false;
    if (self->state_ == State::kClosed) return;
    if (ec && ec != asio::error::operation_aborted) {
      self->client_gone();
      return;
    }
    if (!ec && !self->outbuf_.empty()) {
      ssize_t r = ::send(self->fd(), self->outbuf_.data(), self->outbuf_.size(), MSG_NOSIGNAL);
      if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        self->client_gone();
        return;
      }
      if (r > 0) self->outbuf_.erase(0, static_cast<size_t>(r));
    }
    if (!self->outbuf_.empty()) {
      self->start_write_wait();
    } else {
      self->maybe_read();
    }
  });
}

// While a generation runs, watch the socket: readable with EOF = the client went away.
void Connection::start_watch() {
  if (watch_pending_ || state_ == State::kClosed) return;
  watch_pending_ = true;
  sock_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) {
    self->watch_pending_ = false;
    if (self->state_ == State::kClosed) return;
    if (ec || !self->stream_) {
      self->maybe_read();
      return;
    }
    char c;
    ssize_t r = ::recv(self->fd(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      self->client_gone();
    } else if (r < 0) {
      self->start_watch();
    }
    // r > 0: a pipelined request waits in the socket; it is read after this stream.
  });
}

void Connection::maybe_read() {
  if (state_ != State::kDraining || !outbuf_.empty() || write_pending_ || watch_pending_) return;
  if (close_after_) {
    ::shutdown(fd(), SHUT_WR);
    close();
    return;
  }
  state_ = State::kReading;
  do_read();
}

void Connection::close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  thread_.conns.erase(this);
  beast::error_code ignored;
  sock_.close(ignored);
}

void Connection::reset() {
  linger l{1, 0};  // close() then sends RST
  ::setsockopt(fd(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close();
}

void Connection::client_gone() {
  outbuf_.clear();
  if (stream_) {
    end_stream("cancelled", stream_->streaming ? 200 : 0, How::kClose);
  } else {
    close();
  }
}

std::string Connection::http_response(int status, std::string_view content_type,
                                      std::string_view body, std::string_view extra_headers,
                                      size_t content_length) {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
                  "\r\ndate: " + thread_.http_date() +
                  "\r\nserver: servebench-sim\r\ncontent-length: " +
                  std::to_string(content_length == SIZE_MAX ? body.size() : content_length) +
                  "\r\ncontent-type: " + std::string(content_type) + "\r\n";
  r += extra_headers;
  if (close_after_) r += "connection: close\r\n";
  r += "\r\n";
  r += body;
  return r;
}

}  // namespace servebench::sim::detail
