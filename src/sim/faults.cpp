// Fault injection (--fault rules, the x-servebench-fault header): which fault a request gets,
// and how it acts. HTTP-status faults answer before any token; the others act before token
// `after_tokens` (mid-stream) or, set at or past the output length, after the last token.
#include <chrono>

#include "core/clock.h"
#include "core/error.h"
#include "sim/front.h"

namespace servebench::sim::detail {
namespace {

constexpr std::string_view kErrorEvent =
    R"(data: {"error":{"message":"Injected fault error-event (servebench sim).",)"
    R"("type":"InternalServerError","param":null,"code":500}})"
    "\n\n";

}  // namespace

std::optional<FaultRule> draw_fault(std::string_view header, const std::vector<FaultRule>& rules,
                                    std::mt19937_64& rng) {
  if (!header.empty()) return parse_fault_header(header);
  for (const FaultRule& rule : rules) {
    if (std::uniform_real_distribution<double>(0, 1)(rng) < rule.probability) return rule;
  }
  return std::nullopt;
}

std::optional<ApiError> injected_status_error(const FaultRule& fault) {
  using K = FaultRule::Kind;
  if (fault.kind != K::kHttp429 && fault.kind != K::kHttp500 && fault.kind != K::kHttp503) {
    return std::nullopt;
  }
  int status = fault.kind == K::kHttp429 ? 429 : fault.kind == K::kHttp500 ? 500 : 503;
  const char* type = status == 429   ? "TooManyRequestsError"
                     : status == 500 ? "InternalServerError"
                                     : "ServiceUnavailableError";
  return ApiError{
      status, type,
      std::string("Injected fault ") + fault_kind_name(fault.kind) + " (servebench sim).", ""};
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
      end_reset();
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
    // The token follows the broken event.
    send_malformed_event();
    return !alive();
  }
  if (kind == K::kTruncatedBody) {
    end_truncated();
    return true;
  }
  end_with_error_event();
  return true;
}

bool Connection::apply_fault_at_end(EndFault& fault) {
  using K = FaultRule::Kind;
  Stream& s = *stream_;
  if (!s.fault || s.fault_done) return false;
  s.fault_done = true;
  if (s.fault->kind == K::kResetMidStream) {
    end_reset();
    return true;
  }
  if (s.fault->kind == K::kStall) {
    s.finish_held = true;
    start_stall(core::mono_ns());
    return true;
  }
  fault.malformed = s.fault->kind == K::kMalformedEvent;
  fault.truncate = s.fault->kind == K::kTruncatedBody;
  fault.error_event = s.fault->kind == K::kErrorEventAfter200;
  return false;
}

// Holds every token due until the stall ends, then sends them (late, not counted as lateness)
// and any closing events that waited too.
void Connection::start_stall(int64_t now) {
  Stream& s = *stream_;
  s.stall_until_ns = now + std::llround(s.fault->stall_s * 1e9);
  if (!s.stall_timer) s.stall_timer = std::make_unique<asio::steady_timer>(thread_.ioc);
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

// A cut-off JSON object, framed as a normal event.
void Connection::send_malformed_event() {
  send_event(stream_->shape.head.substr(0, stream_->shape.head.size() / 2) + "\n\n");
}

void Connection::end_reset() {
  end_stream("fault", stream_->streaming ? 200 : 0, How::kReset);
}

// The body ends (chunked terminator) without the final chunk and [DONE]; the connection stays.
void Connection::end_truncated() {
  end_stream("fault", 200, How::kKeepAlive, "0\r\n\r\n");
}

void Connection::end_with_error_event() {
  send_event(kErrorEvent);
  if (alive()) end_stream("fault", 200, How::kClose, "0\r\n\r\n");
}

}  // namespace servebench::sim::detail
