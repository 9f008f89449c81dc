// File: client/sse_event.h (internal to the SSE reader: sse_stream.cpp, sse_event_json.cpp,
// sse_template.cpp)
// What one SSE event says, and the two ways of reading it: in full with simdjson
// (sse_event_json.cpp), or from the holes of the stream's template (sse_template.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "client/sse_stream.h"

namespace servebench::client::detail {

// What one event says, apart from its text (appended straight to the record).
struct EventFields {
  bool has_choices = false;
  bool finish_reason = false;
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  bool has_error = false;
};

// Where an event's holes are, when it matches the stream's template.
struct TemplateMatch {
  struct Span {
    size_t begin;
    size_t length;
  };
  std::array<Span, EventTemplate::kMaxHoles> text;  // the text holes, in document order
  uint32_t text_count = 0;
  bool escaped = false;  // some text hole has an escape
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
};

// Parses one event (`length` bytes of `padded`, followed by SIMDJSON_PADDING zero bytes); text
// goes straight into `text`, an error message into `error_message`. False: malformed.
bool parse_event(simdjson::ondemand::parser& parser, const std::string& padded, size_t length,
                 EventFields& fields, std::string& text, std::string& error_message);

// Whether the whole event matches the template.
bool match_template(const EventTemplate& pattern, const char* event, size_t length,
                    TemplateMatch& match);

}  // namespace servebench::client::detail
