// File: client/testing/sse_bodies.h (test support for the client part)
// Streamed response bodies for the SSE reader's tests, and the reader run over one: events as
// vLLM writes them, framed as SSE, fed in pieces, the outcome compared field by field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "record/record.h"

namespace servebench::client::detail {

// One completions chunk as vLLM streams it.
std::string text_event(const std::string& text, const char* finish_reason = nullptr,
                       int completion_tokens = -1);
// The usage-only last event vLLM sends with include_usage.
std::string usage_event(int prompt_tokens, int completion_tokens);
// The events as an SSE body: "data: <event>" and `separator` each.
std::string sse(const std::vector<std::string>& events, std::string_view separator = "\n\n");

// What a StreamReader made of a body.
struct Result {
  record::RequestRecord record;
  uint64_t events = 0;
  bool saw_done = false;
  int64_t done_ns = -1;
  bool failed = false;
  uint64_t template_hits = 0;
};

// Feeds `body` in pieces of `piece_bytes` (0 = one piece), the first at `now_ns` and each
// next `step_ns` later, then finishes at `finish_ns`.
Result read_body(std::string_view body, size_t piece_bytes = 0, int64_t now_ns = 100,
                 int64_t finish_ns = 900, bool template_enabled = true, int64_t step_ns = 0);

// Feeds `body` in two pieces, split at byte `at`, both at 100, then finishes at 900.
Result read_split(std::string_view body, size_t at);

// The same record, outcome and counts (`context` names the case in a failure).
void expect_same(const Result& a, const Result& b, const std::string& context);

}  // namespace servebench::client::detail
