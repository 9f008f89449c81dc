// File: client/sse_stream.h (internal to the client part)
// Reads one streamed OpenAI response body (Server-Sent Events) into a RequestRecord, on the hot
// path: event boundaries are blank lines ("\n\n", also "\r\n\r\n") found with memchr; an
// incomplete tail is carried to the next read and searched only where new bytes are (an event
// over kMaxEventBytes fails the request); a stream whose lines end with a lone CR (WHATWG: CRLF,
// LF or CR) is read with its line ends rewritten; ':' comment lines (": ping") are skipped;
// "data:" is accepted with or without the space; several data lines are joined with '\n'.
// Each event's JSON is parsed with simdjson ondemand for only the fields the benchmark needs:
// choices[0].text / choices[0].delta.{reasoning_content,reasoning,content},
// choices[0].finish_reason, usage.{prompt,completion}_tokens, and a top-level "error".
// No allocation per event once the buffers have grown (they are reused across requests).
//
// Fast path: consecutive events of one stream are byte-identical but for a few values (the
// token text, the usage counts). When a second event in a row is parsed in full, its bytes are
// kept as an EventTemplate: literal bytes with "holes" at the extracted text strings and at
// every number.
// An event that repeats the literal bytes exactly, with a valid value of the template's kind
// in each hole, is a valid JSON document of the same structure; its fields are read from the
// holes without simdjson (sse_template.cpp). Anything else takes the full parse
// (sse_event_json.cpp). A block "data: <event>" that matches a one-line template is taken in
// place, its end found by the match rather than by a newline search first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "record/record.h"
#include "simdjson.h"

namespace servebench::client::detail {

// Scratch shared by every stream of one event loop (one thread): the simdjson parser and a
// padded copy of the event being parsed.
struct ParseScratch {
  simdjson::ondemand::parser parser;
  std::string padded;  // event JSON + SIMDJSON_PADDING
  std::string joined;  // multi-line data events
};

// `text` as one line for an error field: control characters become spaces, cut at
// `max_bytes` (with "…"), secrets redacted (core::redact_secrets).
std::string one_line_message(std::string_view text, size_t max_bytes = 200);

// The last fully parsed choices event of one stream, split into literal bytes and holes.
struct EventTemplate {
  enum class HoleKind : uint8_t {
    kText,              // string content appended to generated_text (no quotes)
    kNumber,            // any JSON number the parse does not read
    kPromptTokens,      // usage.prompt_tokens, a non-negative integer
    kCompletionTokens,  // usage.completion_tokens, a non-negative integer
  };
  struct Hole {
    uint32_t begin = 0;  // byte range in `bytes`
    uint32_t end = 0;
    HoleKind kind = HoleKind::kNumber;
  };
  static constexpr size_t kMaxHoles = 16;

  std::string bytes;  // the event's JSON, literal between the holes
  std::array<Hole, kMaxHoles> holes;
  uint32_t hole_count = 0;
  bool valid = false;
  bool finish_reason = false;  // the event's finish_reason was not null
  bool single_line = false;    // no '\n' in bytes: whole blocks are matched in place
};

struct EventFields;    // what one event says (sse_event.h)
struct TemplateMatch;  // where an event's holes are (sse_event.h)

class StreamReader {
 public:
  // The longest event kept while it is incomplete: beyond it the request fails (memory bound).
  static constexpr size_t kMaxEventBytes = size_t{64} << 20;

  explicit StreamReader(ParseScratch* scratch) : scratch_(scratch) {}

  // Starts a new body; results go into `record` (first_token_ns, last_token_ns, chunk_ns,
  // chunk_tokens, generated_text, server_*_tokens, error).
  void begin(record::RequestRecord* record);
  // Body bytes as they arrive; `now_ns` is the arrival time (ns after t0), shared by every
  // event completed by these bytes.
  void feed(const char* data, size_t length, int64_t now_ns);
  // The body ended cleanly (the transport reported no error). Handles an unterminated last
  // event (vLLM accepts one), then decides success: at least one choices event, no error
  // event, no malformed event, and either [DONE] or a finish_reason on the last choices event.
  void finish(int64_t now_ns);

  bool saw_done() const { return done_ns_ >= 0; }
  int64_t done_ns() const { return done_ns_; }  // arrival of [DONE], -1 if none
  uint64_t events() const { return events_; }   // data events seen (comments excluded)
  bool failed() const { return failed_; }
  // Bytes searched for event ends since begin(): about the body's size, however it was split.
  uint64_t searched_bytes() const { return searched_bytes_; }
  // Events read through the template fast path since begin().
  uint64_t template_hits() const { return template_hits_; }
  // On by default; off only to compare against the full parse (tests, micro-benchmark).
  void set_template_enabled(bool enabled) {
    template_enabled_ = enabled;
    template_.valid = false;
  }

 private:
  // Takes the complete events of `buffer`, searching for line ends from `resume` on (bytes before
  // it were searched by an earlier call); returns the bytes taken. Leaves where the next call
  // may resume (scan_resume_, scan_single_line_) or, for a lone CR, sets saw_lone_cr_.
  size_t scan(const char* buffer, size_t length, uint64_t base_offset, int64_t now_ns,
              size_t resume);
  void take_tail(int64_t now_ns);  // scans tail_ from tail_search_ (new bytes appended)
  void feed_cr_only(const char* data, size_t length, int64_t now_ns);
  void reread_with_cr_line_ends(const char* begin, const char* end, uint64_t offset,
                                int64_t now_ns);
  // `single_line`: the caller knows the block has no '\n' (false: look).
  void on_block(const char* begin, const char* end, uint64_t offset, int64_t now_ns,
                bool single_line);
  void on_data(const char* begin, size_t length, uint64_t offset, int64_t now_ns);
  // A template-matching block at the start of `block`: taken, and its bytes returned (0: not
  // one, scan() goes on as usual).
  size_t template_block(const char* block, size_t available, int64_t now_ns);
  void take_template_match(const char* event, const TemplateMatch& match, int64_t now_ns);
  // What an event said, into the record.
  void take_fields(const EventFields& fields, const std::string& error_message, int64_t now_ns);
  void fail(std::string message);
  void learn_template(const char* begin, size_t length, size_t text_before,
                      const EventFields& fields);

  ParseScratch* scratch_;
  record::RequestRecord* record_ = nullptr;
  std::string tail_;          // bytes of an event not yet terminated
  uint64_t tail_offset_ = 0;  // body offset of tail_[0]
  size_t tail_search_ = 0;    // tail_ was searched up to here
  bool tail_single_line_ = true;
  size_t scan_resume_ = 0;  // set by scan(): past its return value
  bool scan_single_line_ = true;
  bool cr_line_ends_ = false;  // lines end with CR: rewritten to LF as they come
  bool pending_cr_ = false;    // the last read ended with a CR (an LF next is its CRLF's)
  bool saw_lone_cr_ = false;
  uint64_t searched_bytes_ = 0;
  bool cr_reread_ = false;                            // inside reread_with_cr_line_ends
  std::pair<const char*, const char*> fast_block_{};  // the one-data-line block being read
  uint64_t body_offset_ = 0;                          // body bytes fed so far
  uint64_t events_ = 0;
  int64_t done_ns_ = -1;
  int64_t last_completion_tokens_ = 0;
  bool failed_ = false;  // malformed or error event: later events are ignored
  bool choice_without_usage_ = false;
  bool last_finish_reason_ = false;
  EventTemplate template_;
  EventTemplate template_candidate_;  // being learned
  std::string template_check_;        // the template event's text, rebuilt from its holes
  uint64_t template_hits_ = 0;
  uint32_t parses_since_hit_ = 0;  // full parses of choices events since the last hit
  bool template_enabled_ = true;
};

}  // namespace servebench::client::detail
