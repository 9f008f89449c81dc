// File: sim/front.h (private to the sim part)
// The HTTP front of the simulator: I/O threads, their connections and each connection's (at most
// one) generation. Beast parses requests; a TokenSchedule (token_schedule.h) says when each token
// is due; the front writes each due token as its own SSE event and HTTP chunk with one send()
// (the tokens of one request due together, as a speculative step yields them, as one event).
// Connection's members are spread over the files of its seams:
//   connection.cpp  reading, routing, plain replies, writing and closing the socket;
//   generation.cpp  a generation request becoming a stream, tokens arriving, the stream ending;
//   sse_writer.cpp  each token's SSE event, the closing events, the non-streaming body;
//   faults.cpp      choosing a request's fault and injecting it mid-stream or at the end.
//
// Threads: each I/O thread owns its io_context, its connections and its metrics; everything
// here runs on the thread that owns it. Hot path (per token): a hash lookup, a few memcpys into
// a reused buffer, one send(), a few single-writer counters. No allocation (trace vectors are
// reserved per request).
#pragma once

#include <utility>  // before Asio: its awaitable.hpp uses std::exchange

#include <simdjson.h>
#include <boost/asio.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "sim/metrics_exposition.h"
#include "sim/protocol.h"
#include "sim/sim.h"
#include "sim/token_schedule.h"
#include "sim/trace.h"

namespace servebench::sim::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

class Connection;
struct IoThread;

// What every connection shares: set up by Server::start, read-only while serving (but for the
// schedule and the trace, which guard themselves).
struct Front {
  Options opts;
  std::shared_ptr<const tokenizer::Tokenizer> tok;
  std::vector<std::string> token_json;  // escaped text of each vocabulary id
  std::vector<std::unique_ptr<IoThread>> threads;
  // After `threads`: its timers live on their io_contexts, so it goes first.
  std::unique_ptr<TokenSchedule> schedule;
  std::shared_ptr<TraceWriter> trace;  // shared by a deployment's frontends

  std::string metrics_text() const;
  // The simulated DCGM exporter's text (a deployment), or "" when not serving one.
  std::string dcgm_text() const;
  const std::string& frontend_name() const;
};

// One I/O thread of the front.
struct IoThread final : TokenSink {
  Front& front;
  int index;
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  std::unordered_map<uint64_t, std::shared_ptr<Connection>> streams;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> conns;
  std::string out;   // reused chunk buffer
  std::string text;  // reused: the text of several tokens sent as one event
  // While on_tokens_due hands out a batch of due tokens, streams whose last token went out
  // wait here (with their id) for their closing events: every token of the batch is written
  // first, so a step that ends many streams does not delay the others' tokens.
  bool in_batch = false;
  std::vector<std::pair<std::shared_ptr<Connection>, uint64_t>> finishing;
  FrontMetrics metrics;
  std::mt19937_64 rng;
  // Fault draws have their own stream, so adding a --fault rule leaves a seeded run's lengths
  // and ids as they were.
  std::mt19937_64 fault_rng;
  uint64_t next_seq = 0;
  simdjson::dom::parser json;
  int64_t date_second = -1;
  std::string date;
  std::thread thread;

  IoThread(Front& f, int idx) : front(f), index(idx) {}
  void on_tokens_due(const TokenEvent* events, size_t count) override;
  // Server stop: ends every stream and closes every connection.
  void close_all();
  const std::string& http_date();
};

// One generation: what the request asked, what was sent, its fault, its trace.
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
  ChunkShape shape;
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
  std::vector<int64_t> due_ns, sent_ns;       // trace only
  std::optional<deploy::RequestRoute> route;  // trace only: where a deployment sent it
  std::string_view frontend;                  // trace only: the deployment frontend's name
};

// The request's fault: from the x-servebench-fault header when given (throws core::Error on a
// bad one), else the first --fault rule that fires.
std::optional<FaultRule> draw_fault(std::string_view header, const std::vector<FaultRule>& rules,
                                    std::mt19937_64& rng);
// The answer of an HTTP-status fault (429, 500, 503); nullopt for a fault that acts later.
std::optional<ApiError> injected_status_error(const FaultRule& fault);

// `<hex length>\r\n<payload>\r\n`: one HTTP chunk, appended to out.
void append_chunk(std::string& out, std::string_view payload);

// One client connection and its (at most one) active generation.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(IoThread& t, tcp::socket s) : thread_(t), sock_(std::move(s)) {}

  void start() {
    thread_.conns.emplace(this, weak_from_this());
    do_read();
  }
  void on_token(const TokenEvent& ev);
  // Tokens of this stream due together (1 + accepted speculative tokens): one SSE event.
  void on_tokens(const TokenEvent* events, size_t count);
  // The closing events of stream `id`, if it is still this connection's and alive.
  void finish_deferred(uint64_t id) {
    if (alive() && stream_->id == id) finish();
  }
  // Server stop: end any stream and close.
  void shutdown_now() {
    if (stream_) end_stream("server_stopped", 200, How::kClose);
    close();
  }

 private:
  enum class State { kReading, kBusy, kDraining, kClosed };
  enum class How { kKeepAlive, kClose, kReset };
  // Faults that shape the closing events or the body (apply_fault_at_end).
  struct EndFault {
    bool malformed = false, truncate = false, error_event = false;
  };

  Front& front() { return thread_.front; }
  int fd() { return sock_.native_handle(); }

  // connection.cpp
  void do_read();
  void on_header(beast::error_code ec);
  void on_read(beast::error_code ec);
  void handle();
  void handle_tokenize(const std::string& body, bool detokenize);
  void reply(int status, std::string_view content_type, std::string_view body,
             std::string_view extra_headers = {});
  void reply_error(const ApiError& e, std::string_view extra_headers = {}) {
    reply(e.status, "application/json", error_json(e), extra_headers);
  }
  std::string http_response(int status, std::string_view content_type, std::string_view body,
                            std::string_view extra_headers = {}, size_t content_length = SIZE_MAX);
  bool write_all(const char* p, size_t n);
  bool write_all(std::string_view s) { return write_all(s.data(), s.size()); }
  // After bytes were left in outbuf_: waits for the socket, or ends a stream whose client has
  // let more than Options::max_output_buffer_bytes pile up (false).
  bool buffered();
  bool send_event(std::string_view payload);  // one HTTP chunk
  void start_write_wait();
  void start_watch();
  void maybe_read();
  void close();
  void reset();
  void client_gone();

  // generation.cpp
  void handle_generation(Endpoint endpoint, const http::request<http::string_body>& req);
  void process_token(const TokenEvent& ev, bool fault_delayed);
  // Ends the generation (schedule, metrics, trace), writes `final_bytes`, then keeps the
  // connection for the next request, closes it or resets it. No-op without a stream.
  void end_stream(const char* outcome, int status, How how, std::string_view final_bytes = {});
  bool alive() const { return stream_ != nullptr && state_ != State::kClosed; }

  // sse_writer.cpp
  void emit_token(const TokenEvent& ev, bool fault_delayed) { emit_tokens(&ev, 1, fault_delayed); }
  void emit_tokens(const TokenEvent* events, int32_t count, bool fault_delayed);
  void finish();
  // finish() now, or after the batch of due tokens being handed out (IoThread::finishing).
  void finish_after_batch();
  void finish_nonstream(const EndFault& fault);

  // faults.cpp
  bool apply_fault_mid(const TokenEvent& ev);
  // True when a fault ended the stream or holds it (stall); else fills `fault`.
  bool apply_fault_at_end(EndFault& fault);
  void start_stall(int64_t now);
  void send_malformed_event();
  void end_reset();
  void end_truncated();
  void end_with_error_event();

  IoThread& thread_;
  tcp::socket sock_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  State state_ = State::kReading;
  bool close_after_ = false;
  bool watch_pending_ = false, write_pending_ = false;
  std::string outbuf_;
  std::unique_ptr<Stream> stream_;
};

}  // namespace servebench::sim::detail
