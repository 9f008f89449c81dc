// Writing a generation out: each token as its own SSE event in its own HTTP chunk (one send) —
// or the tokens of one request due together (speculative decoding) as one event, as vLLM does —
// the closing events ([DONE], usage), or for a non-streaming request the whole body at the end.
// Every write may end the stream (client gone), so `alive()` is checked after each.
#include <charconv>
#include <cstring>

#include "core/clock.h"
#include "sim/front.h"

namespace servebench::sim::detail {

void Connection::emit_tokens(const TokenEvent* events, int32_t count, bool fault_delayed) {
  const TokenEvent& ev = events[0];
  Stream& s = *stream_;
  Front& f = front();
  const int32_t k = s.sent;
  int64_t now;
  if (s.streaming) {
    if (k == 0 && s.endpoint == Endpoint::kChat) {
      if (!send_event(s.shape.role_event)) return;
    }
    // Format the event in thread_.out after a 16-byte gap, then put the chunk size in front.
    std::string& out = thread_.out;
    out.assign(16, ' ');
    const bool last = k + count == s.output_tokens;
    std::string_view text;
    if (count == 1) {
      text =
          f.token_json[static_cast<size_t>(output_token_id(s.token_seed, k, f.tok->vocab_size()))];
    } else {
      thread_.text.clear();
      for (int32_t i = 0; i < count; ++i) {
        thread_.text += f.token_json[static_cast<size_t>(
            output_token_id(s.token_seed, k + i, f.tok->vocab_size()))];
      }
      text = thread_.text;
    }
    append_token_event(out, s.shape, text, last ? s.finish_reason : "", k + count);
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
  s.sent += count;
  FrontMetrics& m = thread_.metrics;
  m.generation_tokens.add(static_cast<uint64_t>(count));
  const int64_t lag = now - ev.due_ns;
  if (!fault_delayed) {
    for (int32_t i = 0; i < count; ++i) m.lag.observe(lag);
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
  if (f.trace) {
    for (int32_t i = 0; i < count; ++i) {
      s.due_ns.push_back(events[i].due_ns);
      s.sent_ns.push_back(now);
    }
  }
}

// After the last token: closing events (streaming) or the whole body (non-streaming), and any
// fault set at or after the output length.
void Connection::finish() {
  EndFault fault;
  if (apply_fault_at_end(fault)) return;
  if (!stream_->streaming) {
    finish_nonstream(fault);
    return;
  }
  if (fault.malformed) {
    send_malformed_event();
    if (!alive()) return;
  }
  if (fault.truncate) {
    end_truncated();
    return;
  }
  if (fault.error_event) {
    end_with_error_event();
    return;
  }
  // The usage event, [DONE] and the last chunk in one send.
  std::string closing;
  if (stream_->include_usage) {
    std::string ev;
    append_usage_event(ev, stream_->shape, stream_->sent);
    append_chunk(closing, ev);
  }
  append_chunk(closing, "data: [DONE]\n\n");
  closing += "0\r\n\r\n";
  // A fault already applied mid-stream (a malformed event, a stall) still makes this a fault.
  const bool faulted = stream_->fault && stream_->fault_done;
  end_stream(faulted ? "fault" : "ok", 200, How::kKeepAlive, closing);
}

void Connection::finish_nonstream(const EndFault& fault) {
  Stream& s = *stream_;
  Front& f = front();
  const std::string rid = "x-request-id: " + s.request_id + "\r\n";
  if (fault.error_event) {
    ApiError e{500, "InternalServerError", "Injected fault error-event (servebench sim).", ""};
    end_stream("fault", 500, How::kKeepAlive,
               http_response(500, "application/json", error_json(e), rid));
    return;
  }
  std::string text;
  text.reserve(static_cast<size_t>(s.sent) * 8);
  for (int32_t k = 0; k < s.sent; ++k) {
    text +=
        f.token_json[static_cast<size_t>(output_token_id(s.token_seed, k, f.tok->vocab_size()))];
  }
  std::string body = completion_body(s.endpoint, s.response_id, s.created, s.shape.head, text,
                                     s.finish_reason, s.prompt_tokens, s.sent);
  if (fault.malformed) body.resize(body.size() / 2);
  if (fault.truncate) {
    // Promise the whole body, send half of it, close.
    const size_t full = body.size();
    body.resize(full / 2);
    end_stream("fault", 200, How::kClose, http_response(200, "application/json", body, rid, full));
    return;
  }
  end_stream(fault.malformed ? "fault" : "ok", 200, How::kKeepAlive,
             http_response(200, "application/json", body, rid));
}

}  // namespace servebench::sim::detail
