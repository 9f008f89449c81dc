// The trace's JSON lines (see trace.h).
#include "sim/trace.h"

#include <cerrno>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "sim/front.h"
#include "sim/protocol.h"

namespace servebench::sim::detail {

TraceWriter::TraceWriter(const std::string& path, const std::string& flag) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) {
    throw core::Error(core::ErrorKind::kInput, flag + " " + path,
                      std::string("cannot open for writing: ") + std::strerror(errno));
  }
}

TraceWriter::~TraceWriter() {
  if (file_) std::fclose(file_);
}

void TraceWriter::flush() {
  std::lock_guard lock(mu_);
  std::fflush(file_);
}

void TraceWriter::write(const Stream& s, int status, const char* outcome, int64_t end_ns) {
  std::string line = R"({"request_id":)";
  append_quoted(line, s.request_id);
  auto key = [&](const char* name) {
    line += ",\"";
    line += name;
    line += "\":";
  };
  auto text = [&](const char* name, std::string_view value) {
    key(name);
    append_quoted(line, value);
  };
  auto number = [&](const char* name, int64_t value) {
    key(name);
    append_int(line, value);
  };
  auto numbers = [&](const char* name, const std::vector<int64_t>& values) {
    key(name);
    line += '[';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i) line += ',';
      append_int(line, values[i]);
    }
    line += ']';
  };
  text("response_id", s.response_id);
  text("endpoint", s.path);
  key("stream");
  line += s.streaming ? "true" : "false";
  number("arrival_ns", s.arrival_ns);
  number("prompt_tokens", s.prompt_tokens);
  number("output_tokens", s.output_tokens);
  number("tokens_sent", s.sent);
  if (s.first_sent_ns >= 0) {
    number("first_token_sent_ns", s.first_sent_ns);
  } else {
    key("first_token_sent_ns");
    line += "null";
  }
  number("end_ns", end_ns);
  number("status", status);
  text("outcome", outcome);
  text("fault", s.fault ? fault_kind_name(s.fault->kind) : "none");
  number("max_lag_ns", s.max_lag_ns);
  if (s.route) {
    const deploy::RequestRoute& r = *s.route;
    text("frontend", s.frontend);
    text("worker", r.worker);
    number("replica", r.replica);
    if (!r.prefill_worker.empty()) {
      text("prefill_worker", r.prefill_worker);
      number("prefill_replica", r.prefill_replica);
    }
    number("cached_prompt_tokens", r.cached_prompt_tokens);
    if (r.kv_transfer_bytes > 0) {
      number("kv_transfer_bytes", std::llround(r.kv_transfer_bytes));
      number("kv_transfer_start_ns", r.kv_transfer_start_ns);
      number("kv_transfer_end_ns", r.kv_transfer_end_ns);
    }
  }
  numbers("due_ns", s.due_ns);
  numbers("sent_ns", s.sent_ns);
  line += "}\n";
  std::lock_guard lock(mu_);
  std::fwrite(line.data(), 1, line.size(), file_);
}

}  // namespace servebench::sim::detail
