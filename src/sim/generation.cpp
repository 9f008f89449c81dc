// A generation's life on its connection: the parsed request becomes a Stream handed to the
// TokenSchedule, due tokens come back through the I/O thread (IoThread::on_tokens_due), and
// end_stream settles the schedule, the metrics and the trace however the stream ended.
#include <algorithm>
#include <cmath>
#include <ctime>

#include "core/clock.h"
#include "core/error.h"
#include "sim/front.h"

namespace servebench::sim::detail {
namespace {

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

}  // namespace

void Connection::handle_generation(Endpoint endpoint, const http::request<http::string_body>& req) {
  Front& f = front();
  const int64_t arrival = core::mono_ns();
  auto sv = [](boost::beast::string_view v) { return std::string_view(v.data(), v.size()); };
  std::string_view rid_header = sv(req["x-request-id"]);
  std::string_view path = endpoint == Endpoint::kChat ? "/v1/chat/completions" : "/v1/completions";

  auto rejected = [&](const ApiError& e, const char* outcome,
                      const std::optional<FaultRule>& fault) {
    thread_.metrics.rejected.add(1);
    if (f.trace) {
      Stream s;
      s.request_id = std::string(rid_header);
      s.path = path.data();
      s.arrival_ns = arrival;
      s.endpoint = endpoint;
      s.fault = fault;
      f.trace->write(s, e.status, outcome, core::mono_ns());
    }
    reply_error(e);
  };

  GenerationRequest g;
  ApiError err;
  ParseLimits limits{f.opts.served_model_name, f.opts.max_model_len};
  if (!parse_generation_request(endpoint, req.body(), *f.tok, limits, thread_.json, g, err)) {
    rejected(err, "rejected", std::nullopt);
    return;
  }

  std::optional<FaultRule> fault;
  try {
    fault = draw_fault(sv(req["x-servebench-fault"]), f.opts.faults, thread_.fault_rng);
  } catch (const core::Error& e) {
    rejected(bad_request(e.what()), "rejected", std::nullopt);
    return;
  }
  if (fault) {
    if (std::optional<ApiError> status_error = injected_status_error(*fault)) {
      thread_.metrics.faults[static_cast<int>(fault->kind)].add(1);
      rejected(*status_error, "fault", fault);
      return;
    }
  }

  int32_t n = g.ignore_eos ? g.max_tokens
                           : draw_output_length(f.opts.output_length, g.max_tokens, thread_.rng);
  n = std::min(std::max(n, std::max<int32_t>(g.min_tokens, 1)), g.max_tokens);

  auto s = std::make_unique<Stream>();
  s->id = make_request_id(static_cast<size_t>(thread_.index), ++thread_.next_seq);
  s->endpoint = endpoint;
  s->path = path.data();
  s->response_id =
      (endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + hex_id(thread_.rng(), thread_.rng());
  s->request_id = rid_header.empty() ? s->response_id : std::string(rid_header);
  s->created = static_cast<int64_t>(std::time(nullptr));
  s->streaming = g.stream;
  s->include_usage = g.include_usage;
  s->keep_alive = !close_after_;
  s->prompt_tokens = g.prompt_tokens;
  s->output_tokens = n;
  s->finish_reason = n == g.max_tokens ? "length" : "stop";
  s->arrival_ns = arrival;
  s->frontend = f.frontend_name();
  s->token_seed = (f.opts.seed + 1) * 0x9e3779b97f4a7c15ULL ^ (s->id * 0xd1b54a32d192ed03ULL);
  if (fault) {
    s->fault = fault;
    s->fault_at = std::min(fault->after_tokens, n);
  }
  if (g.stream) {
    s->shape = make_chunk_shape(endpoint, s->response_id, s->created, g.model, g.prompt_tokens,
                                g.continuous_usage);
  } else {
    s->shape.head = g.model;  // non-streaming keeps the model name for the body
  }
  if (f.trace) {
    size_t reserve = static_cast<size_t>(std::clamp(n, 0, 1 << 16));
    s->due_ns.reserve(reserve);
    s->sent_ns.reserve(reserve);
  }

  std::string why = f.schedule->submit(s->id, RequestShape{g.prompt_tokens, n}, arrival,
                                       PromptPrefix{g.prefix_key, g.prefix_tokens});
  if (!why.empty()) {
    rejected(bad_request(why, "max_tokens"), "rejected", std::nullopt);
    return;
  }
  thread_.metrics.prompt_tokens.add(static_cast<uint64_t>(g.prompt_tokens));
  stream_ = std::move(s);
  thread_.streams.emplace(stream_->id, shared_from_this());

  if (g.stream) {
    std::string head = "HTTP/1.1 200 OK\r\ndate: " + thread_.http_date() +
                       "\r\nserver: servebench-sim\r\ncontent-type: text/event-stream; "
                       "charset=utf-8\r\nx-request-id: " +
                       stream_->request_id + "\r\n" +
                       (close_after_ ? "connection: close\r\n" : "") +
                       "transfer-encoding: chunked\r\n\r\n";
    if (!write_all(head)) return;
  }
  start_watch();
}

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
  if (ev.last && alive()) finish_after_batch();
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
  if (!s.model_done) front().schedule->cancel(s.id);
  if (front().trace) s.route = front().schedule->take_route(s.id);
  FrontMetrics& m = thread_.metrics;
  if (what == "ok") {
    (std::string_view(s.finish_reason) == "length" ? m.success_length : m.success_stop).add(1);
    m.e2e.observe(end - s.arrival_ns);
  } else if (gone) {
    m.cancelled.add(1);
  }
  if (s.fault && s.fault_done) m.faults[static_cast<int>(s.fault->kind)].add(1);
  if (s.stall_timer) s.stall_timer->cancel();
  if (front().trace) front().trace->write(s, status, outcome, end);
  thread_.streams.erase(s.id);

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

void Connection::on_tokens(const TokenEvent* events, size_t count) {
  Stream& s = *stream_;
  // Faults, stalls and non-streaming answers go token by token.
  if (count == 1 || !s.streaming || s.fault || !s.held.empty()) {
    const uint64_t id = s.id;
    for (size_t i = 0; i < count && stream_ && stream_->id == id; ++i) on_token(events[i]);
    return;
  }
  const bool last = events[count - 1].last;
  if (last) s.model_done = true;
  emit_tokens(events, static_cast<int32_t>(count), false);
  if (last && alive()) finish_after_batch();
}

void Connection::finish_after_batch() {
  if (!thread_.in_batch) {
    finish();
    return;
  }
  thread_.finishing.emplace_back(shared_from_this(), stream_->id);
}

void IoThread::on_tokens_due(const TokenEvent* events, size_t count) {
  in_batch = true;
  for (size_t i = 0; i < count;) {
    size_t end = i + 1;
    while (end < count && events[end].request_id == events[i].request_id &&
           events[end].due_ns == events[i].due_ns) {
      ++end;
    }
    auto it = streams.find(events[i].request_id);
    if (it != streams.end()) {  // else cancelled meanwhile
      std::shared_ptr<Connection> c = it->second;
      c->on_tokens(events + i, end - i);
    }
    i = end;
  }
  in_batch = false;
  // The batch's tokens are out; now the closing events of the streams it ended.
  for (auto& [c, id] : finishing) c->finish_deferred(id);
  finishing.clear();
}

void IoThread::close_all() {
  std::vector<std::shared_ptr<Connection>> all;
  for (auto& [ptr, weak] : conns) {
    if (auto c = weak.lock()) all.push_back(std::move(c));
  }
  for (auto& c : all) c->shutdown_now();
  conns.clear();
}

}  // namespace servebench::sim::detail
