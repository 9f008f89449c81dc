// The simulator's HTTP server: Beast parses requests, a TimingModel says when each token is
// due, one steady_timer per I/O thread is armed at the model's next due time (minus a short
// spin), and each due token is written as its own SSE event and HTTP chunk with one send().
//
// Threads: each I/O thread ("worker") owns its io_context, its connections and a timer. In
// fixed mode each worker owns its own model; in engine mode one model (one simulated engine)
// is shared, guarded by a mutex and driven by worker 0's timer, which hands each due batch to
// the worker that owns the connection (request ids carry the worker index in their top bits).
//
// Hot path (per token): a hash lookup, a few memcpys into a reused buffer, one send(), a few
// single-writer counters. No allocation (trace vectors are reserved per request).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <simdjson.h>
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

#include "core/clock.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/system.h"
#include "sim/protocol.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::sim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using detail::ApiError;
using detail::Endpoint;

// Wake this early, then spin to the due time. It bounds lateness by the wake-up latency of a
// timer with 1 ns slack, and costs up to this much CPU per wake-up (bench/scripts/bench_sim.py).
constexpr int64_t kSpinNs = 50'000;
constexpr int kWorkerShift = 48;  // request id = worker << 48 | sequence
constexpr std::string_view kErrorEvent =
    R"(data: {"error":{"message":"Injected fault error-event (servebench sim).",)"
    R"("type":"InternalServerError","param":null,"code":500}})"
    "\n\n";

// ---------------------------------------------------------------------------------------------
// Metrics: each worker writes its own (single writer, relaxed atomics); /metrics sums them.

struct Counter {
  std::atomic<uint64_t> v{0};
  void add(uint64_t d) {
    v.store(v.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  void max_of(uint64_t x) {
    if (x > v.load(std::memory_order_relaxed)) v.store(x, std::memory_order_relaxed);
  }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

// vLLM's buckets (vllm/v1/metrics/loggers.py) for TTFT and ITL; e2e likewise.
constexpr double kTtftBuckets[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                   0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                   20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
constexpr double kItlBuckets[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                  0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
constexpr double kE2eBuckets[] = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                  5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                  60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
// servebench's own: emission lateness (send − due), fine-grained below a millisecond.
constexpr double kLagBuckets[] = {1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
                                  5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,    0.25, 0.5,  1.0};

struct Histogram {
  std::vector<int64_t> bounds_ns;
  std::unique_ptr<Counter[]> buckets;  // bounds + the +Inf bucket
  Counter count, sum_ns;

  template <size_t N>
  explicit Histogram(const double (&bounds)[N]) : buckets(new Counter[N + 1]) {
    for (double b : bounds) bounds_ns.push_back(std::llround(b * 1e9));
  }
  void observe(int64_t ns) {
    if (ns < 0) ns = 0;
    size_t i = 0;
    while (i < bounds_ns.size() && ns > bounds_ns[i]) ++i;
    buckets[i].add(1);
    count.add(1);
    sum_ns.add(static_cast<uint64_t>(ns));
  }
};

struct WorkerMetrics {
  Counter prompt_tokens, generation_tokens, success_length, success_stop, cancelled, rejected;
  Counter faults[8];
  Counter lag_max_ns;
  Histogram ttft{kTtftBuckets}, itl{kItlBuckets}, e2e{kE2eBuckets}, lag{kLagBuckets};
};

// ---------------------------------------------------------------------------------------------

struct TraceWriter {
  std::mutex mu;
  FILE* file = nullptr;
  void write(const std::string& line) {
    std::lock_guard lock(mu);
    std::fwrite(line.data(), 1, line.size(), file);
  }
  ~TraceWriter() {
    if (file) std::fclose(file);
  }
};

struct Worker;

// A timing model and the worker whose timer drives it.
struct ModelHost {
  std::mutex mu;
  std::unique_ptr<TimingModel> model;
  Worker* owner = nullptr;
  std::atomic<int32_t> running{0}, waiting{0};
  std::atomic<uint64_t> preemptions{0};
  std::atomic<double> kv_usage{0};
  void snapshot() {  // under mu
    ModelStats s = model->stats();
    running.store(s.running, std::memory_order_relaxed);
    waiting.store(s.waiting, std::memory_order_relaxed);
    preemptions.store(s.preemptions, std::memory_order_relaxed);
    kv_usage.store(s.kv_cache_usage, std::memory_order_relaxed);
  }
};

class Connection;
struct Impl;

struct Worker {
  Impl& impl;
  int index;
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  asio::steady_timer timer{ioc};
  uint64_t timer_gen = 0;
  bool timer_armed = false;
  int64_t armed_wake_ns = 0;
  ModelHost* host = nullptr;
  bool owns_host = false;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> streams;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> conns;
  std::vector<TokenEvent> events;
  std::vector<std::vector<TokenEvent>> outgoing;  // engine owner: batches for other workers
  std::string out;                                // reused chunk buffer
  WorkerMetrics metrics;
  std::mt19937_64 rng;
  // Fault draws have their own stream, so adding a --fault rule leaves a seeded run's lengths
  // and ids as they were.
  std::mt19937_64 fault_rng;
  uint64_t next_seq = 0;
  simdjson::dom::parser json;
  int64_t date_second = -1;
  std::string date;
  std::thread thread;

  Worker(Impl& i, int idx) : impl(i), index(idx) {}
  void arm();
  void request_rearm();
  void on_timer();
  void dispatch(int64_t now);
  void deliver(const TokenEvent& ev);
  void close_all();
  const std::string& http_date();
};

struct Impl {
  Options opts;
  std::shared_ptr<const tokenizer::Tokenizer> tok;
  std::vector<std::string> token_json;  // escaped text of each vocabulary id
  std::vector<std::unique_ptr<ModelHost>> hosts;
  std::vector<std::unique_ptr<Worker>> workers;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::unique_ptr<asio::steady_timer> accept_retry;
  // A descriptor held in reserve for when the table is full: shed_waiting_connection().
  int spare_fd = -1;
  size_t next_worker = 0;
  uint16_t bound_port = 0;
  std::unique_ptr<TraceWriter> trace;
  std::mutex stop_mu, wait_mu;
  bool started = false, stopped = false;
  asio::io_context* wait_ioc = nullptr;

  ~Impl() {
    if (spare_fd >= 0) ::close(spare_fd);
  }
  void do_accept();
  bool shed_waiting_connection();
  std::string metrics_text();
};

const std::string& Worker::http_date() {
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

int32_t draw_output_length(const OutputLengthDistribution& d, int32_t max_tokens,
                           std::mt19937_64& rng) {
  using K = OutputLengthDistribution::Kind;
  double v = max_tokens;
  switch (d.kind) {
    case K::kMaxTokens:
      break;
    case K::kUniform:
      v = std::uniform_int_distribution<int32_t>(d.min, std::max(d.min, d.max))(rng);
      break;
    case K::kNormal:
      v = std::llround(std::normal_distribution<double>(d.mean, d.stddev)(rng));
      break;
    case K::kExponential:
      v = std::ceil(std::exponential_distribution<double>(1.0 / d.mean)(rng));
      break;
  }
  if (!(v >= 1)) v = 1;
  return static_cast<int32_t>(std::min<double>(v, max_tokens));
}

void append_int(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  core::append_json_escaped(out, s);
  out += '"';
}

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

// ---------------------------------------------------------------------------------------------
// One client connection and its (at most one) active generation.

struct Stream {
  uint64_t id = 0;
  std::string request_id;  // x-request-id, or the response id
  std::string response_id;
  int64_t created = 0;
  Endpoint endpoint = Endpoint::kCompletions;
  const char* path = "";
  bool streaming = false;
  bool include_usage = false;
  bool keep_alive = true;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  const char* finish_reason = "length";
  int64_t arrival_ns = 0;
  uint64_t token_seed = 0;
  detail::ChunkShape shape;
  int32_t sent = 0;  // tokens processed (streamed, or produced for non-streaming)
  bool model_done = false;
  int64_t first_sent_ns = -1, last_sent_ns = -1, max_lag_ns = 0;
  std::optional<FaultRule> fault;
  int32_t fault_at = 0;
  bool fault_done = false;
  int64_t stall_until_ns = 0;
  std::vector<TokenEvent> held;  // due during a stall
  bool finish_held = false;      // the closing events wait for a stall too
  std::unique_ptr<asio::steady_timer> stall_timer;
  std::vector<int64_t> due_ns, sent_ns;  // trace only
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Worker& w, tcp::socket s) : w_(w), sock_(std::move(s)) {}

  void start() {
    w_.conns.emplace(this, weak_from_this());
    do_read();
  }
  void on_token(const TokenEvent& ev);
  // Server stop: end any stream and close.
  void shutdown_now() {
    if (stream_) end_stream("server_stopped", 200, How::kClose);
    close();
  }

 private:
  enum class State { kReading, kBusy, kDraining, kClosed };
  enum class How { kKeepAlive, kClose, kReset };

  Impl& impl() { return w_.impl; }
  int fd() { return sock_.native_handle(); }

  void do_read();
  void on_header(beast::error_code ec);
  void on_read(beast::error_code ec);
  void handle();
  void handle_generation(Endpoint endpoint, const http::request<http::string_body>& req);
  void handle_tokenize(const std::string& body, bool detokenize);

  void reply(int status, std::string_view content_type, std::string_view body,
             std::string_view extra_headers = {});
  void reply_error(const ApiError& e, std::string_view extra_headers = {}) {
    reply(e.status, "application/json", detail::error_json(e), extra_headers);
  }
  bool write_all(const char* p, size_t n);
  bool write_all(std::string_view s) { return write_all(s.data(), s.size()); }
  bool send_event(std::string_view payload);  // one HTTP chunk
  void start_write_wait();
  void start_watch();
  void maybe_read();
  void close();
  void reset();
  void client_gone();

  void process_token(const TokenEvent& ev, bool fault_delayed);
  bool apply_fault_mid(const TokenEvent& ev);
  void emit_token(const TokenEvent& ev, bool fault_delayed);
  void finish();
  void finish_nonstream(bool malformed, bool truncate, bool error_event);
  void start_stall(int64_t now);
  // Ends the generation (model, metrics, trace), writes `final_bytes`, then keeps the
  // connection for the next request, closes it or resets it. No-op without a stream.
  void end_stream(const char* outcome, int status, How how, std::string_view final_bytes = {});
  bool alive() const { return stream_ != nullptr && state_ != State::kClosed; }
  std::string http_response(int status, std::string_view content_type, std::string_view body,
                            std::string_view extra_headers = {}, size_t content_length = SIZE_MAX);
  void trace_line(const Stream& s, int status, const char* outcome, int64_t end_ns);

  Worker& w_;
  tcp::socket sock_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  State state_ = State::kReading;
  bool close_after_ = false;
  bool watch_pending_ = false, write_pending_ = false;
  std::string outbuf_;
  std::unique_ptr<Stream> stream_;
};

void Connection::do_read() {
  parser_.emplace();
  parser_->body_limit(impl().opts.max_body_bytes);
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
                             std::to_string(impl().opts.max_body_bytes) + " bytes.",
                         ""});
    return;
  }
  if (ec) {
    close_after_ = true;
    reply_error(detail::bad_request("Malformed HTTP request: " + ec.message() + "."));
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
          detail::models_body(impl().opts.served_model_name, impl().opts.max_model_len,
                              static_cast<int64_t>(std::time(nullptr))));
  } else if (path == "/health") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "application/json", "");
  } else if (path == "/metrics") {
    if (!need(http::verb::get, "GET")) return;
    reply(200, "text/plain; version=0.0.4; charset=utf-8", impl().metrics_text());
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
  const auto& tok = *impl().tok;
  std::vector<tokenizer::TokenId> ids;
  ApiError err;
  if (detokenize) {
    if (!detail::parse_detokenize_request(body, impl().opts.served_model_name, w_.json, ids, err)) {
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
  if (!detail::parse_tokenize_request(body, tok, impl().opts.served_model_name, w_.json, ids, strs,
                                      err)) {
    reply_error(err);
    return;
  }
  std::string out = R"({"count":)";
  append_int(out, static_cast<int64_t>(ids.size()));
  out += R"(,"max_model_len":)";
  append_int(out, impl().opts.max_model_len);
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

void Connection::handle_generation(Endpoint endpoint, const http::request<http::string_body>& req) {
  Impl& im = impl();
  const int64_t arrival = core::mono_ns();
  auto sv = [](boost::beast::string_view v) { return std::string_view(v.data(), v.size()); };
  std::string_view rid_header = sv(req["x-request-id"]);
  std::string_view path = endpoint == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";

  auto rejected = [&](const ApiError& e, const char* outcome, const char* fault) {
    w_.metrics.rejected.add(1);
    if (im.trace) {
      Stream s;
      s.request_id = std::string(rid_header);
      s.path = path.data();
      s.arrival_ns = arrival;
      s.endpoint = endpoint;
      if (fault) s.fault = parse_fault_header(fault);
      trace_line(s, e.status, outcome, core::mono_ns());
    }
    reply_error(e);
  };

  detail::GenerationRequest g;
  ApiError err;
  detail::ParseLimits limits{im.opts.served_model_name, im.opts.max_model_len};
  if (!detail::parse_generation_request(endpoint, req.body(), *im.tok, limits, w_.json, g, err)) {
    rejected(err, "rejected", nullptr);
    return;
  }

  std::optional<FaultRule> fault;
  std::string_view fault_header = sv(req["x-servebench-fault"]);
  if (!fault_header.empty()) {
    try {
      fault = parse_fault_header(fault_header);
    } catch (const core::Error& e) {
      rejected(detail::bad_request(e.what()), "rejected", nullptr);
      return;
    }
  } else {
    for (const FaultRule& rule : im.opts.faults) {
      if (std::uniform_real_distribution<double>(0, 1)(w_.fault_rng) < rule.probability) {
        fault = rule;
        break;
      }
    }
  }
  if (fault) {
    using K = FaultRule::Kind;
    if (fault->kind == K::kHttp429 || fault->kind == K::kHttp500 || fault->kind == K::kHttp503) {
      w_.metrics.faults[static_cast<int>(fault->kind)].add(1);
      int status = fault->kind == K::kHttp429 ? 429 : fault->kind == K::kHttp500 ? 500 : 503;
      const char* type = status == 429   ? "TooManyRequestsError"
                         : status == 500 ? "InternalServerError"
                                         : "ServiceUnavailableError";
      rejected(ApiError{status, type,
                        std::string("Injected fault ") + fault_kind_name(fault->kind) +
                            " (servebench sim).",
                        ""},
               "fault", fault_kind_name(fault->kind));
      return;
    }
  }

  int32_t n =
      g.ignore_eos ? g.max_tokens : draw_output_length(im.opts.output_length, g.max_tokens, w_.rng);
  n = std::min(std::max(n, std::max<int32_t>(g.min_tokens, 1)), g.max_tokens);

  auto s = std::make_unique<Stream>();
  s->id = (static_cast<uint64_t>(w_.index) << kWorkerShift) | ++w_.next_seq;
  s->endpoint = endpoint;
  s->path = path.data();
  s->response_id =
      (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + detail::hex_id(w_.rng(), w_.rng());
  s->request_id = rid_header.empty() ? s->response_id : std::string(rid_header);
  s->created = static_cast<int64_t>(std::time(nullptr));
  s->streaming = g.stream;
  s->include_usage = g.include_usage;
  s->keep_alive = !close_after_;
  s->prompt_tokens = g.prompt_tokens;
  s->output_tokens = n;
  s->finish_reason = n == g.max_tokens ? "length" : "stop";
  s->arrival_ns = arrival;
  s->token_seed = (im.opts.seed + 1) * 0x9e3779b97f4a7c15ULL ^ (s->id * 0xd1b54a32d192ed03ULL);
  if (fault) {
    s->fault = fault;
    s->fault_at = std::min(fault->after_tokens, n);
  }
  if (g.stream) {
    s->shape = detail::make_chunk_shape(endpoint, s->response_id, s->created, g.model,
                                        g.prompt_tokens, g.continuous_usage);
  } else {
    s->shape.head = g.model;  // non-streaming keeps the model name for the body
  }
  if (im.trace) {
    size_t reserve = static_cast<size_t>(std::min(n, 1 << 16));
    s->due_ns.reserve(reserve);
    s->sent_ns.reserve(reserve);
  }

  {
    ModelHost& h = *w_.host;
    std::lock_guard lock(h.mu);
    RequestShape shape{g.prompt_tokens, n};
    std::string why = h.model->rejection_reason(shape);
    if (!why.empty()) {
      err = detail::bad_request(why, "max_tokens");
    } else {
      h.model->add(s->id, shape, arrival);
      h.snapshot();
    }
  }
  if (!err.message.empty()) {
    rejected(err, "rejected", nullptr);
    return;
  }
  w_.metrics.prompt_tokens.add(static_cast<uint64_t>(g.prompt_tokens));
  stream_ = std::move(s);
  w_.streams.emplace(stream_->id, shared_from_this());
  w_.request_rearm();

  if (g.stream) {
    std::string head = "HTTP/1.1 200 OK\r\ndate: " + w_.http_date() +
                       "\r\nserver: servebench-sim\r\ncontent-type: text/event-stream; "
                       "charset=utf-8\r\nx-request-id: " +
                       stream_->request_id + "\r\n" +
                       (close_after_ ? "connection: close\r\n" : "") +
                       "transfer-encoding: chunked\r\n\r\n";
    if (!write_all(head)) return;
  }
  start_watch();
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
    return true;
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
  start_write_wait();
  return true;
}

bool Connection::send_event(std::string_view payload) {
  // `<hex len>\r\n<payload>\r\n`, one send.
  std::string& out = w_.out;
  out.clear();
  char hex[16];
  auto r = std::to_chars(hex, hex + sizeof hex, payload.size(), 16);
  out.append(hex, r.ptr);
  out += "\r\n";
  out += payload;
  out += "\r\n";
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
  w_.conns.erase(this);
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

// --- tokens -----------------------------------------------------------------------------------

void Connection::on_token(const TokenEvent& ev) {
  Stream& s = *stream_;
  if (ev.last) s.model_done = true;
  if (!s.held.empty() || (s.stall_until_ns != 0 && core::mono_ns() < s.stall_until_ns)) {
    s.held.push_back(ev);
    return;
  }
  process_token(ev, false);
}

void Connection::process_token(const TokenEvent& ev, bool fault_delayed) {
  Stream& s = *stream_;
  if (s.fault && !s.fault_done && s.sent == s.fault_at && s.sent < s.output_tokens) {
    if (apply_fault_mid(ev) || !alive()) return;
  }
  emit_token(ev, fault_delayed);
  if (ev.last && alive()) finish();
}

// Applies the stream's fault before token `s.sent`; true when the token is not to be sent now.
bool Connection::apply_fault_mid(const TokenEvent& ev) {
  Stream& s = *stream_;
  using K = FaultRule::Kind;
  const K kind = s.fault->kind;
  const int64_t now = core::mono_ns();
  switch (kind) {
    case K::kResetMidStream:
      s.fault_done = true;
      end_stream("fault", stream_->streaming ? 200 : 0, How::kReset);
      return true;
    case K::kStall:
      s.fault_done = true;
      s.held.push_back(ev);
      start_stall(now);
      return true;
    default:
      break;
  }
  if (!s.streaming) return false;  // the others shape the final body instead
  s.fault_done = true;
  if (kind == K::kMalformedEvent) {
    // A cut-off JSON object, framed as a normal event; the token follows.
    send_event(s.shape.head.substr(0, s.shape.head.size() / 2) + "\n\n");
    return !alive();
  }
  if (kind == K::kTruncatedBody) {
    end_stream("fault", 200, How::kKeepAlive, "0\r\n\r\n");
    return true;
  }
  send_event(kErrorEvent);  // error-event
  if (alive()) end_stream("fault", 200, How::kClose, "0\r\n\r\n");
  return true;
}

void Connection::start_stall(int64_t now) {
  Stream& s = *stream_;
  s.stall_until_ns = now + std::llround(s.fault->stall_s * 1e9);
  if (!s.stall_timer) s.stall_timer = std::make_unique<asio::steady_timer>(w_.ioc);
  s.stall_timer->expires_at(
      asio::steady_timer::time_point(std::chrono::nanoseconds(s.stall_until_ns)));
  s.stall_timer->async_wait([self = shared_from_this(), id = s.id](beast::error_code ec) {
    if (ec || !self->stream_ || self->stream_->id != id || self->state_ == State::kClosed) return;
    Stream& st = *self->stream_;
    st.stall_until_ns = 0;
    std::vector<TokenEvent> held = std::move(st.held);
    st.held.clear();
    for (const TokenEvent& e : held) {
      if (!self->stream_ || self->stream_->id != id || self->state_ == State::kClosed) return;
      self->process_token(e, true);
    }
    if (self->stream_ && self->stream_->id == id && self->stream_->finish_held) {
      self->stream_->finish_held = false;
      self->finish();
    }
  });
}

void Connection::emit_token(const TokenEvent& ev, bool fault_delayed) {
  Stream& s = *stream_;
  Impl& im = impl();
  const int32_t k = s.sent;
  int64_t now;
  if (s.streaming) {
    if (k == 0 && s.endpoint == Endpoint::kChat) {
      if (!send_event(s.shape.role_event)) return;
    }
    // Format the event in w_.out after a 16-byte gap, then put the chunk size in front.
    std::string& out = w_.out;
    out.assign(16, ' ');
    const bool last = k + 1 == s.output_tokens;
    tokenizer::TokenId id = detail::output_token_id(s.token_seed, k, im.tok->vocab_size());
    detail::append_token_event(out, s.shape, im.token_json[static_cast<size_t>(id)],
                               last ? s.finish_reason : "", k + 1);
    const size_t len = out.size() - 16;
    char hex[16];
    auto r = std::to_chars(hex, hex + sizeof hex, len, 16);
    const size_t hex_len = static_cast<size_t>(r.ptr - hex);
    const size_t start = 16 - hex_len - 2;
    std::memcpy(out.data() + start, hex, hex_len);
    out[14] = '\r';
    out[15] = '\n';
    out += "\r\n";
    now = core::mono_ns();
    if (!write_all(out.data() + start, out.size() - start)) return;
  } else {
    now = core::mono_ns();
  }
  ++s.sent;
  WorkerMetrics& m = w_.metrics;
  m.generation_tokens.add(1);
  const int64_t lag = now - ev.due_ns;
  if (!fault_delayed) {
    m.lag.observe(lag);
    m.lag_max_ns.max_of(static_cast<uint64_t>(std::max<int64_t>(lag, 0)));
    s.max_lag_ns = std::max(s.max_lag_ns, lag);
  }
  if (s.first_sent_ns < 0) {
    s.first_sent_ns = now;
    m.ttft.observe(now - s.arrival_ns);
  } else {
    m.itl.observe(now - s.last_sent_ns);
  }
  s.last_sent_ns = now;
  if (im.trace) {
    s.due_ns.push_back(ev.due_ns);
    s.sent_ns.push_back(now);
  }
}

// After the last token: closing events (streaming) or the whole body (non-streaming), and any
// fault set at or after the output length. Every write may end the stream (client gone), so
// `alive()` is checked after each.
void Connection::finish() {
  using K = FaultRule::Kind;
  bool malformed = false, truncate = false, error_event = false;
  {
    Stream& s = *stream_;
    if (s.fault && !s.fault_done) {
      if (s.fault->kind == K::kResetMidStream) {
        s.fault_done = true;
        end_stream("fault", s.streaming ? 200 : 0, How::kReset);
        return;
      }
      if (s.fault->kind == K::kStall) {
        s.fault_done = true;
        s.finish_held = true;
        start_stall(core::mono_ns());
        return;
      }
      s.fault_done = true;
      malformed = s.fault->kind == K::kMalformedEvent;
      truncate = s.fault->kind == K::kTruncatedBody;
      error_event = s.fault->kind == K::kErrorEventAfter200;
    }
    if (!s.streaming) {
      finish_nonstream(malformed, truncate, error_event);
      return;
    }
  }
  if (malformed) {
    send_event(stream_->shape.head.substr(0, stream_->shape.head.size() / 2) + "\n\n");
    if (!alive()) return;
  }
  if (truncate) {
    end_stream("fault", 200, How::kKeepAlive, "0\r\n\r\n");
    return;
  }
  if (error_event) {
    send_event(kErrorEvent);
    if (!alive()) return;
    end_stream("fault", 200, How::kClose, "0\r\n\r\n");
    return;
  }
  if (stream_->include_usage) {
    std::string ev;
    detail::append_usage_event(ev, stream_->shape, stream_->sent);
    send_event(ev);
    if (!alive()) return;
  }
  send_event("data: [DONE]\n\n");
  if (!alive()) return;
  // A fault already applied mid-stream (a malformed event, a stall) still makes this a fault.
  const bool faulted = stream_->fault && stream_->fault_done;
  end_stream(faulted ? "fault" : "ok", 200, How::kKeepAlive, "0\r\n\r\n");
}

std::string Connection::http_response(int status, std::string_view content_type,
                                      std::string_view body, std::string_view extra_headers,
                                      size_t content_length) {
  std::string r = "HTTP/1.1 " + std::to_string(status) + " " + status_text(status) +
                  "\r\ndate: " + w_.http_date() + "\r\nserver: servebench-sim\r\ncontent-length: " +
                  std::to_string(content_length == SIZE_MAX ? body.size() : content_length) +
                  "\r\ncontent-type: " + std::string(content_type) + "\r\n";
  r += extra_headers;
  if (close_after_) r += "connection: close\r\n";
  r += "\r\n";
  r += body;
  return r;
}

void Connection::finish_nonstream(bool malformed, bool truncate, bool error_event) {
  Stream& s = *stream_;
  Impl& im = impl();
  const std::string rid = "x-request-id: " + s.request_id + "\r\n";
  if (error_event) {
    ApiError e{500, "InternalServerError", "Injected fault error-event (servebench sim).", ""};
    end_stream("fault", 500, How::kKeepAlive,
               http_response(500, "application/json", detail::error_json(e), rid));
    return;
  }
  std::string text;
  text.reserve(static_cast<size_t>(s.sent) * 8);
  for (int32_t k = 0; k < s.sent; ++k) {
    text += im.token_json[static_cast<size_t>(
        detail::output_token_id(s.token_seed, k, im.tok->vocab_size()))];
  }
  std::string body = detail::completion_body(s.endpoint, s.response_id, s.created, s.shape.head,
                                             text, s.finish_reason, s.prompt_tokens, s.sent);
  if (malformed) body.resize(body.size() / 2);
  if (truncate) {
    // Promise the whole body, send half of it, close.
    const size_t full = body.size();
    body.resize(full / 2);
    end_stream("fault", 200, How::kClose, http_response(200, "application/json", body, rid, full));
    return;
  }
  end_stream(malformed ? "fault" : "ok", 200, How::kKeepAlive,
             http_response(200, "application/json", body, rid));
}

void Connection::end_stream(const char* outcome, int status, How how,
                            std::string_view final_bytes) {
  if (!stream_) return;
  auto self = shared_from_this();
  std::unique_ptr<Stream> sp = std::move(stream_);
  Stream& s = *sp;
  const int64_t end = core::mono_ns();
  const std::string_view what(outcome);
  const bool gone = what == "cancelled" || what == "server_stopped";
  if (!s.model_done) {
    ModelHost& h = *w_.host;
    std::lock_guard lock(h.mu);
    h.model->cancel(s.id);
    h.snapshot();
  }
  WorkerMetrics& m = w_.metrics;
  if (what == "ok") {
    (std::string_view(s.finish_reason) == "length" ? m.success_length : m.success_stop).add(1);
    m.e2e.observe(end - s.arrival_ns);
  } else if (gone) {
    m.cancelled.add(1);
  }
  if (s.fault && s.fault_done) m.faults[static_cast<int>(s.fault->kind)].add(1);
  if (s.stall_timer) s.stall_timer->cancel();
  if (impl().trace) trace_line(s, status, outcome, end);
  w_.streams.erase(s.id);

  if (how == How::kReset) {
    outbuf_.clear();
    reset();
    return;
  }
  if (gone) {
    outbuf_.clear();
    close();
    return;
  }
  if (how == How::kClose || !s.keep_alive) close_after_ = true;
  state_ = State::kDraining;
  if (!final_bytes.empty()) {
    write_all(final_bytes);
    if (state_ == State::kClosed) return;
  }
  if (watch_pending_) {
    beast::error_code ignored;
    sock_.cancel(ignored);  // the watch (and a write wait, re-armed by its handler) end
  }
  maybe_read();
}

void Connection::trace_line(const Stream& s, int status, const char* outcome, int64_t end_ns) {
  std::string line = R"({"request_id":)";
  append_quoted(line, s.request_id);
  line += R"(,"response_id":)";
  append_quoted(line, s.response_id);
  line += R"(,"endpoint":)";
  append_quoted(line, s.path);
  line += R"(,"stream":)";
  line += s.streaming ? "true" : "false";
  line += R"(,"arrival_ns":)";
  append_int(line, s.arrival_ns);
  line += R"(,"prompt_tokens":)";
  append_int(line, s.prompt_tokens);
  line += R"(,"output_tokens":)";
  append_int(line, s.output_tokens);
  line += R"(,"tokens_sent":)";
  append_int(line, s.sent);
  line += R"(,"first_token_sent_ns":)";
  if (s.first_sent_ns >= 0) {
    append_int(line, s.first_sent_ns);
  } else {
    line += "null";
  }
  line += R"(,"end_ns":)";
  append_int(line, end_ns);
  line += R"(,"status":)";
  append_int(line, status);
  line += R"(,"outcome":)";
  append_quoted(line, outcome);
  line += R"(,"fault":)";
  append_quoted(line, s.fault ? fault_kind_name(s.fault->kind) : "none");
  line += R"(,"max_lag_ns":)";
  append_int(line, s.max_lag_ns);
  line += R"(,"due_ns":[)";
  for (size_t i = 0; i < s.due_ns.size(); ++i) {
    if (i) line += ',';
    append_int(line, s.due_ns[i]);
  }
  line += R"(],"sent_ns":[)";
  for (size_t i = 0; i < s.sent_ns.size(); ++i) {
    if (i) line += ',';
    append_int(line, s.sent_ns[i]);
  }
  line += "]}\n";
  impl().trace->write(line);
}

// --- worker: the timer ------------------------------------------------------------------------

void Worker::request_rearm() {
  if (owns_host) {
    arm();
  } else {
    Worker* owner = host->owner;
    asio::post(owner->ioc, [owner] { owner->arm(); });
  }
}

void Worker::arm() {
  std::optional<int64_t> next;
  {
    std::lock_guard lock(host->mu);
    next = host->model->next_due_ns();
  }
  if (!next) return;
  const int64_t wake = *next - kSpinNs;
  if (timer_armed && wake >= armed_wake_ns) return;
  timer_armed = true;
  armed_wake_ns = wake;
  const uint64_t gen = ++timer_gen;
  timer.expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(wake)));
  timer.async_wait([this, gen](beast::error_code ec) {
    if (ec || gen != timer_gen) return;
    timer_armed = false;
    on_timer();
  });
}

void Worker::on_timer() {
  std::optional<int64_t> next;
  {
    std::lock_guard lock(host->mu);
    next = host->model->next_due_ns();
  }
  if (!next) return;
  int64_t now = core::mono_ns();
  if (*next - now > kSpinNs) {
    arm();
    return;
  }
  while (now < *next) now = core::mono_ns();
  events.clear();
  {
    std::lock_guard lock(host->mu);
    host->model->pop_due(now, events);
    host->snapshot();
    next = host->model->next_due_ns();
  }
  dispatch(now);
  if (next) {
    if (*next - core::mono_ns() <= kSpinNs) {
      // Soon due again: come back after any ready I/O rather than looping here.
      ++timer_gen;
      timer_armed = false;
      asio::post(ioc, [this] { on_timer(); });
    } else {
      arm();
    }
  }
}

void Worker::dispatch(int64_t) {
  const size_t n_workers = impl.workers.size();
  for (const TokenEvent& ev : events) {
    size_t owner = static_cast<size_t>(ev.request_id >> kWorkerShift);
    if (owner == static_cast<size_t>(index) || owner >= n_workers) {
      deliver(ev);
    } else {
      if (outgoing.size() < n_workers) outgoing.resize(n_workers);
      outgoing[owner].push_back(ev);
    }
  }
  for (size_t i = 0; i < outgoing.size(); ++i) {
    if (outgoing[i].empty()) continue;
    Worker* target = impl.workers[i].get();
    asio::post(target->ioc, [target, batch = std::move(outgoing[i])] {
      for (const TokenEvent& ev : batch) target->deliver(ev);
    });
    outgoing[i] = {};
  }
}

void Worker::deliver(const TokenEvent& ev) {
  auto it = streams.find(ev.request_id);
  if (it == streams.end()) return;  // cancelled meanwhile
  std::shared_ptr<Connection> c = it->second;
  c->on_token(ev);
}

void Worker::close_all() {
  std::vector<std::shared_ptr<Connection>> all;
  for (auto& [ptr, weak] : conns) {
    if (auto c = weak.lock()) all.push_back(std::move(c));
  }
  for (auto& c : all) c->shutdown_now();
  conns.clear();
  ++timer_gen;
  timer.cancel();
}

// --- server -----------------------------------------------------------------------------------

void Impl::do_accept() {
  Worker* target = workers[next_worker++ % workers.size()].get();
  acceptor->async_accept(target->ioc, [this, target](beast::error_code ec, tcp::socket s) {
    if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
    if (ec) {
      const bool no_descriptors =
          ec == asio::error::no_descriptors ||
          (ec.category() == asio::error::get_system_category() && ec.value() == ENFILE);
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        std::fprintf(stderr, "servebench sim: accept failed: %s (%s)\n", ec.message().c_str(),
                     no_descriptors ? "closing waiting connections until descriptors free up; "
                                      "raise the open-files limit (ulimit -n)"
                                    : "retrying");
      }
      if (no_descriptors && shed_waiting_connection()) {
        do_accept();
        return;
      }
      // Nothing shed (or another error): wait a little instead of spinning.
      accept_retry->expires_after(std::chrono::milliseconds(10));
      accept_retry->async_wait([this](beast::error_code e) {
        if (!e) do_accept();
      });
      return;
    }
    beast::error_code ignored;
    s.set_option(tcp::no_delay(true), ignored);
    s.non_blocking(true, ignored);
    auto c = std::make_shared<Connection>(*target, std::move(s));
    asio::post(target->ioc, [c] { c->start(); });
    do_accept();
  });
}

// With the descriptor table full, a connection waiting in the listen backlog would wait
// forever, its client with it (the embedded client shares our table, so it may hold every
// slot while waiting for us). The spare descriptor makes room to accept one and close it at
// once: its client sees the connection closed, records a failure and frees its own socket.
// The accepted socket, shut down, becomes the next spare, so the slot is never left free for
// another thread to take between closing the connection and re-reserving. False when nothing
// was shed (no spare, or the connection went away).
bool Impl::shed_waiting_connection() {
  // Linux reports EMFILE before looking at the backlog: with nobody waiting, keep the spare.
  pollfd waiting{acceptor->native_handle(), POLLIN, 0};
  if (::poll(&waiting, 1, 0) != 1) return false;
  if (spare_fd < 0) spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (spare_fd < 0) return false;
  ::close(spare_fd);
  spare_fd = -1;
  // The listening socket is non-blocking (set in start), so this never waits.
  const int fd = ::accept4(acceptor->native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) {
    spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return false;
  }
  ::shutdown(fd, SHUT_RDWR);
  spare_fd = fd;
  return true;
}

void append_histogram(std::string& out, const char* name, const char* help, const char* labels,
                      const std::vector<std::unique_ptr<Worker>>& workers,
                      Histogram WorkerMetrics::*which, const double* bounds, size_t n) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += " histogram\n";
  uint64_t cumulative = 0, count = 0, sum_ns = 0;
  char num[64];
  for (size_t i = 0; i <= n; ++i) {
    for (const auto& w : workers) cumulative += (w->metrics.*which).buckets[i].get();
    out += name;
    out += "_bucket{";
    out += labels;
    out += ",le=\"";
    if (i < n) {
      std::snprintf(num, sizeof num, "%g", bounds[i]);
      out += num;
    } else {
      out += "+Inf";
    }
    out += "\"} ";
    append_int(out, static_cast<int64_t>(cumulative));
    out += '\n';
  }
  for (const auto& w : workers) {
    count += (w->metrics.*which).count.get();
    sum_ns += (w->metrics.*which).sum_ns.get();
  }
  std::snprintf(num, sizeof num, "%.9f", static_cast<double>(sum_ns) * 1e-9);
  out += name;
  out += "_sum{";
  out += labels;
  out += "} ";
  out += num;
  out += '\n';
  out += name;
  out += "_count{";
  out += labels;
  out += "} ";
  append_int(out, static_cast<int64_t>(count));
  out += '\n';
}

std::string Impl::metrics_text() {
  std::string labels = "engine=\"0\",model_name=\"";
  core::append_json_escaped(labels, opts.served_model_name);
  labels += '"';
  std::string out;
  auto sum = [&](Counter WorkerMetrics::*c) {
    uint64_t t = 0;
    for (const auto& w : workers) t += (w->metrics.*c).get();
    return t;
  };
  auto line = [&](const char* name, const char* type, const char* help, const std::string& value,
                  const std::string& sample, const std::string& extra_labels = {}) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    out += sample + "{" + labels + extra_labels + "} " + value + "\n";
  };
  int64_t running = 0, waiting = 0;
  uint64_t preemptions = 0;
  double kv = 0;
  for (const auto& h : hosts) {
    running += h->running.load(std::memory_order_relaxed);
    waiting += h->waiting.load(std::memory_order_relaxed);
    preemptions += h->preemptions.load(std::memory_order_relaxed);
    kv = std::max(kv, h->kv_usage.load(std::memory_order_relaxed));
  }
  char num[64];
  line("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
       std::to_string(running), "vllm:num_requests_running");
  line("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
       std::to_string(waiting), "vllm:num_requests_waiting");
  std::snprintf(num, sizeof num, "%.6f", kv);
  line("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", num,
       "vllm:kv_cache_usage_perc");
  line("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.",
       std::to_string(preemptions), "vllm:num_preemptions_total");
  line("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
       std::to_string(sum(&WorkerMetrics::prompt_tokens)), "vllm:prompt_tokens_total");
  line("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
       std::to_string(sum(&WorkerMetrics::generation_tokens)), "vllm:generation_tokens_total");
  out +=
      "# HELP vllm:request_success Count of successfully processed requests.\n"
      "# TYPE vllm:request_success counter\n";
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"length\"} " +
         std::to_string(sum(&WorkerMetrics::success_length)) + "\n";
  out += "vllm:request_success_total{" + labels + ",finished_reason=\"stop\"} " +
         std::to_string(sum(&WorkerMetrics::success_stop)) + "\n";
  append_histogram(out, "vllm:time_to_first_token_seconds",
                   "Histogram of time to first token in seconds.", labels.c_str(), workers,
                   &WorkerMetrics::ttft, kTtftBuckets, std::size(kTtftBuckets));
  append_histogram(out, "vllm:inter_token_latency_seconds",
                   "Histogram of inter-token latency in seconds.", labels.c_str(), workers,
                   &WorkerMetrics::itl, kItlBuckets, std::size(kItlBuckets));
  append_histogram(out, "vllm:e2e_request_latency_seconds",
                   "Histogram of e2e request latency in seconds.", labels.c_str(), workers,
                   &WorkerMetrics::e2e, kE2eBuckets, std::size(kE2eBuckets));
  // servebench's own: how late tokens left versus the model's schedule (never silent drift).
  append_histogram(out, "servebench_sim:emission_lag_seconds",
                   "Token send time minus its scheduled due time, in seconds.", labels.c_str(),
                   workers, &WorkerMetrics::lag, kLagBuckets, std::size(kLagBuckets));
  uint64_t lag_max = 0;
  for (const auto& w : workers) lag_max = std::max(lag_max, w->metrics.lag_max_ns.get());
  std::snprintf(num, sizeof num, "%.9f", static_cast<double>(lag_max) * 1e-9);
  line("servebench_sim:emission_lag_max_seconds", "gauge",
       "Largest emission lag seen since start, in seconds.", num,
       "servebench_sim:emission_lag_max_seconds");
  line("servebench_sim:requests_cancelled", "counter",
       "Generations ended because the client went away (or the server stopped).",
       std::to_string(sum(&WorkerMetrics::cancelled)), "servebench_sim:requests_cancelled_total");
  line("servebench_sim:requests_rejected", "counter",
       "Generation requests answered with an error status before streaming.",
       std::to_string(sum(&WorkerMetrics::rejected)), "servebench_sim:requests_rejected_total");
  out +=
      "# HELP servebench_sim:faults_injected Faults applied, by kind.\n"
      "# TYPE servebench_sim:faults_injected counter\n";
  for (int k = 0; k < 8; ++k) {
    uint64_t t = 0;
    for (const auto& w : workers) t += w->metrics.faults[k].get();
    out += "servebench_sim:faults_injected_total{" + labels + ",kind=\"" +
           fault_kind_name(static_cast<FaultRule::Kind>(k)) + "\"} " + std::to_string(t) + "\n";
  }
  return out;
}

}  // namespace

struct Server::Impl : sim::Impl {};

Server::Server(Options options) : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
}

Server::~Server() {
  stop();
}

void Server::start() {
  Impl& im = *impl_;
  std::lock_guard lock(im.stop_mu);
  if (im.started) return;
  const Options& o = im.opts;
  if (o.threads < 1 || o.threads > 256) {
    throw core::Error(core::ErrorKind::kUsage, "--threads",
                      "must be between 1 and 256, got " + std::to_string(o.threads));
  }
  if (o.max_model_len < 2) {
    throw core::Error(core::ErrorKind::kUsage, "--max-model-len",
                      "must be at least 2, got " + std::to_string(o.max_model_len));
  }
  im.tok = o.tokenizer
               ? o.tokenizer
               : std::shared_ptr<const tokenizer::Tokenizer>(tokenizer::make_word_tokenizer());
  const int32_t vocab = im.tok->vocab_size();
  // Output token ids are drawn modulo the vocabulary size (loading refuses an empty one).
  if (vocab < 1) {
    throw core::Error(core::ErrorKind::kInput, "--tokenizer " + im.tok->name(),
                      "has an empty vocabulary: the simulator needs ids to stream");
  }
  im.token_json.resize(static_cast<size_t>(vocab));
  for (int32_t i = 0; i < vocab; ++i) {
    core::append_json_escaped(im.token_json[static_cast<size_t>(i)], im.tok->token_text(i));
  }

  core::raise_open_files_limit();

  for (int i = 0; i < o.threads; ++i) {
    auto w = std::make_unique<Worker>(static_cast<sim::Impl&>(im), i);
    w->rng.seed(o.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i));
    w->fault_rng.seed(~(o.seed * 0xbf58476d1ce4e5b9ULL + static_cast<uint64_t>(i)));
    im.workers.push_back(std::move(w));
  }
  auto make_model = [&](int worker) {
    if (o.mode == Options::Mode::kEngine) return make_engine_model(o.engine);
    FixedTiming t = o.fixed;
    t.seed = o.seed + static_cast<uint64_t>(worker);
    return make_fixed_model(t);
  };
  if (o.mode == Options::Mode::kEngine) {
    auto h = std::make_unique<ModelHost>();
    h->model = make_model(0);
    h->owner = im.workers[0].get();
    for (auto& w : im.workers) w->host = h.get();
    im.workers[0]->owns_host = true;
    im.hosts.push_back(std::move(h));
  } else {
    for (auto& w : im.workers) {
      auto h = std::make_unique<ModelHost>();
      h->model = make_model(w->index);
      h->owner = w.get();
      w->host = h.get();
      w->owns_host = true;
      im.hosts.push_back(std::move(h));
    }
  }

  if (!o.trace_out.empty()) {
    im.trace = std::make_unique<TraceWriter>();
    im.trace->file = std::fopen(o.trace_out.c_str(), "w");
    if (!im.trace->file) {
      throw core::Error(core::ErrorKind::kInput, o.trace_out_flag + " " + o.trace_out,
                        std::string("cannot open for writing: ") + std::strerror(errno));
    }
  }

  Worker& w0 = *im.workers[0];
  const std::string where = "sim: listen on " + o.host + ":" + std::to_string(o.port);
  beast::error_code ec;
  auto address = asio::ip::make_address(o.host, ec);
  if (ec) throw core::Error(core::ErrorKind::kUsage, "--host " + o.host, "not an IP address");
  im.acceptor = std::make_unique<tcp::acceptor>(w0.ioc);
  tcp::endpoint ep(address, o.port);
  im.acceptor->open(ep.protocol(), ec);
  if (!ec) im.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) im.acceptor->bind(ep, ec);
  if (!ec) im.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) im.acceptor->non_blocking(true, ec);
  if (ec) throw core::Error(core::ErrorKind::kUsage, where, ec.message());
  im.spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  im.bound_port = im.acceptor->local_endpoint().port();
  im.accept_retry = std::make_unique<asio::steady_timer>(w0.ioc);
  im.do_accept();

  for (auto& w : im.workers) {
    w->guard.emplace(asio::make_work_guard(w->ioc));
    Worker* wp = w.get();
    w->thread = std::thread([wp] {
      // Timer wake-ups to the µs rather than the default +50 µs slack, so the spin before each
      // due time (kSpinNs) can stay short.
      prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
      wp->ioc.run();
    });
  }
  im.started = true;
}

uint16_t Server::port() const {
  return impl_->bound_port;
}

void Server::wait() {
  Impl& im = *impl_;
  {
    asio::io_context sig_ioc;
    asio::signal_set signals(sig_ioc, SIGINT, SIGTERM);
    signals.async_wait([&](beast::error_code ec, int) {
      if (!ec) sig_ioc.stop();
    });
    {
      std::lock_guard lock(im.wait_mu);
      if (im.stopped) return;
      im.wait_ioc = &sig_ioc;
    }
    auto guard = asio::make_work_guard(sig_ioc);
    sig_ioc.run();
    std::lock_guard lock(im.wait_mu);
    im.wait_ioc = nullptr;
  }
  stop();
}

void Server::stop() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.wait_mu);
    if (im.wait_ioc) im.wait_ioc->stop();
  }
  std::lock_guard lock(im.stop_mu);
  if (im.stopped) return;
  {
    std::lock_guard wl(im.wait_mu);
    im.stopped = true;
  }
  if (!im.started) return;
  std::vector<std::future<void>> done;
  {
    std::promise<void> p;
    done.push_back(p.get_future());
    asio::post(im.workers[0]->ioc, [&im, p = std::make_shared<std::promise<void>>(std::move(p))] {
      beast::error_code ignored;
      im.acceptor->close(ignored);
      im.accept_retry->cancel();
      if (im.spare_fd >= 0) ::close(im.spare_fd);
      im.spare_fd = -1;
      p->set_value();
    });
  }
  for (auto& w : im.workers) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    Worker* wp = w.get();
    asio::post(w->ioc, [wp, p] {
      wp->close_all();
      p->set_value();
    });
  }
  for (auto& f : done) f.wait();
  for (auto& w : im.workers) {
    w->guard.reset();
    w->ioc.stop();
  }
  for (auto& w : im.workers) {
    if (w->thread.joinable()) w->thread.join();
  }
  if (im.trace) {
    std::lock_guard tl(im.trace->mu);
    std::fflush(im.trace->file);
  }
}

}  // namespace servebench::sim
