// The SSE reader's framing (sse_stream.h): event blocks split at blank lines, an unfinished
// tail carried to the next read, data lines joined, [DONE], and what each event says taken
// into the record. The event's JSON is read by the template fast path (sse_template.cpp) when
// it can, else in full (sse_event_json.cpp).
#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "client/sse_event.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

// A CR not followed by LF: the stream ends its lines with CR alone. A CR ending the bytes is
// undecided (its LF may come with the next read).
bool has_lone_cr(const char* begin, size_t length) {
  const char* end = begin + length;
  for (const char* at = begin; at < end;) {
    const auto* cr = static_cast<const char*>(std::memchr(at, '\r', end - at));
    if (cr == nullptr || cr + 1 >= end) return false;
    if (cr[1] != '\n') return true;
    at = cr + 2;
  }
  return false;
}

bool starts_with(const char* begin, const char* end, std::string_view prefix) {
  return static_cast<size_t>(end - begin) >= prefix.size() &&
         std::memcmp(begin, prefix.data(), prefix.size()) == 0;
}

}  // namespace

std::string one_line_message(std::string_view text, size_t max_bytes) {
  // Redact before the cut, which could otherwise leave the start of a key too short for the
  // patterns to match. The margin past the cut keeps whole keys whole while bounding the text
  // std::regex sees.
  std::string redacted = core::redact_secrets(std::string(text.substr(0, max_bytes + 512)));
  std::string line;
  line.reserve(std::min(redacted.size(), max_bytes) + 4);
  for (char c : redacted) {
    if (line.size() >= max_bytes) {
      line += "…";
      break;
    }
    line.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

void StreamReader::begin(record::RequestRecord* record) {
  record_ = record;
  tail_.clear();
  tail_offset_ = 0;
  tail_search_ = 0;
  tail_single_line_ = true;
  body_offset_ = 0;
  cr_line_ends_ = false;
  pending_cr_ = false;
  saw_lone_cr_ = false;
  searched_bytes_ = 0;
  events_ = 0;
  done_ns_ = -1;
  last_completion_tokens_ = 0;
  failed_ = false;
  choice_without_usage_ = false;
  last_finish_reason_ = false;
  template_.valid = false;  // a new response: another id, so another template
  template_hits_ = 0;
  parses_since_hit_ = 0;
}

void StreamReader::feed(const char* data, size_t length, int64_t now_ns) {
  if (failed_ || done_ns_ >= 0) {  // nothing after an error or [DONE] is measured
    body_offset_ += length;
    return;
  }
  if (cr_line_ends_) {
    feed_cr_only(data, length, now_ns);
    return;
  }
  if (tail_.empty()) {
    // Common case: whole events in this read, parsed in place.
    size_t used = scan(data, length, body_offset_, now_ns, 0);
    if (saw_lone_cr_) {
      // A stream with CR line ends: what is not yet taken is read again, line ends rewritten.
      body_offset_ += used;
      feed_cr_only(data + used, length - used, now_ns);
      return;
    }
    if (used < length && !failed_ && done_ns_ < 0) {
      tail_.assign(data + used, length - used);
      tail_offset_ = body_offset_ + used;
      tail_search_ = scan_resume_;
      tail_single_line_ = scan_single_line_;
    }
  } else {
    tail_.append(data, length);
    take_tail(now_ns);
  }
  body_offset_ += length;
}

void StreamReader::take_tail(int64_t now_ns) {
  // Resumed where the last scan of this tail stopped: an event of many reads is searched once.
  size_t used = scan(tail_.data(), tail_.size(), tail_offset_, now_ns, tail_search_);
  if (saw_lone_cr_ && !cr_line_ends_) {
    std::string rest = tail_.substr(used);
    const uint64_t rest_offset = tail_offset_ + used;
    tail_.clear();
    tail_search_ = 0;
    const uint64_t fed = body_offset_;
    body_offset_ = rest_offset;
    cr_line_ends_ = true;
    feed_cr_only(rest.data(), rest.size(), now_ns);
    body_offset_ = fed;  // the caller adds this read's length
    return;
  }
  tail_.erase(0, used);
  tail_offset_ += used;
  tail_search_ = scan_resume_;
  tail_single_line_ = scan_single_line_;
  if (!failed_ && done_ns_ < 0 && tail_.size() > kMaxEventBytes) {
    fail("an SSE event exceeds " + std::to_string(kMaxEventBytes >> 20) +
         " MiB (unterminated at byte " + std::to_string(tail_offset_ + tail_.size()) + ")");
    tail_.clear();
  }
}

// WHATWG SSE: a line ends with CRLF, LF or CR. A stream seen to end lines with a lone CR has each
// CR (and CRLF) rewritten to LF before the usual scan; a CR that ends a read ends its line at
// once, and an LF starting the next read is then the rest of that CRLF.
void StreamReader::feed_cr_only(const char* data, size_t length, int64_t now_ns) {
  cr_line_ends_ = true;
  const size_t before = tail_.size();
  tail_.reserve(before + length);
  size_t i = 0;
  if (pending_cr_ && length > 0 && data[0] == '\n') i = 1;
  pending_cr_ = false;
  for (; i < length; ++i) {
    const char c = data[i];
    if (c != '\r') {
      tail_.push_back(c);
      continue;
    }
    tail_.push_back('\n');
    if (i + 1 < length) {
      if (data[i + 1] == '\n') ++i;
    } else {
      pending_cr_ = true;
    }
  }
  if (before == 0) {
    tail_offset_ = body_offset_;
    tail_search_ = 0;
    tail_single_line_ = true;
  }
  take_tail(now_ns);
  body_offset_ += length;
}

// A block ended by LFs with a lone CR inside (a stream mixing CR with other line ends): its
// lines split at every line end, and the events that makes read one by one. Off the hot path:
// only for blocks that are not one data line, or that failed to parse.
void StreamReader::reread_with_cr_line_ends(const char* begin, const char* end, uint64_t offset,
                                            int64_t now_ns) {
  std::string rewritten;
  rewritten.reserve(static_cast<size_t>(end - begin) + 2);
  for (const char* at = begin; at < end; ++at) {
    if (*at != '\r') {
      rewritten.push_back(*at);
      continue;
    }
    rewritten.push_back('\n');
    if (at + 1 < end && at[1] == '\n') ++at;
  }
  rewritten += "\n\n";
  cr_reread_ = true;
  const size_t resume = scan_resume_;
  const bool single_line = scan_single_line_;
  scan(rewritten.data(), rewritten.size(), offset, now_ns, 0);
  scan_resume_ = resume;
  scan_single_line_ = single_line;
  cr_reread_ = false;
}

size_t StreamReader::scan(const char* buffer, size_t length, uint64_t base_offset, int64_t now_ns,
                          size_t resume) {
  size_t start = 0;
  size_t search = resume;
  searched_bytes_ += length - resume;
  bool single_line = resume == 0 || tail_single_line_;  // no newline in the block so far
  while (search < length) {
    if (search == start && template_.valid && template_.single_line) {
      const size_t used = template_block(buffer + start, length - start, now_ns);
      if (used > 0) {
        if (failed_) return length;  // an error event ended the stream
        start = search = start + used;
        continue;
      }
    }
    const void* found = std::memchr(buffer + search, '\n', length - search);
    if (found == nullptr) {
      // No line end in the rest: an unfinished event, unless its lines end with a lone CR.
      if (!cr_line_ends_ && has_lone_cr(buffer + search, length - search)) {
        saw_lone_cr_ = true;
        return start;
      }
      // The last byte again next time: a CR there may be a CRLF's first half.
      search = std::max(start, length - 1);
      break;
    }
    size_t newline = static_cast<const char*>(found) - buffer;
    size_t next;
    if (newline + 1 < length && buffer[newline + 1] == '\n') {
      next = newline + 2;
    } else if (newline + 2 < length && buffer[newline + 1] == '\r' && buffer[newline + 2] == '\n') {
      next = newline + 3;
    } else if (newline + 1 >= length || (buffer[newline + 1] == '\r' && newline + 2 >= length)) {
      search = newline;  // the blank line may still come with the next read
      break;
    } else {
      search = newline + 1;
      single_line = false;
      continue;
    }
    on_block(buffer + start, buffer + newline, base_offset + start, now_ns, single_line);
    start = search = next;
    single_line = true;
    if (failed_ || done_ns_ >= 0) return length;
  }
  scan_resume_ = std::max(search, start) - start;
  scan_single_line_ = single_line;
  return start;
}

// One event block (without its terminating blank line): lines of "field: value".
void StreamReader::on_block(const char* begin, const char* end, uint64_t offset, int64_t now_ns,
                            bool single_line) {
  constexpr std::string_view kData = "data:";
  if (starts_with(begin, end, kData) &&
      (single_line || std::memchr(begin, '\n', end - begin) == nullptr)) {
    const char* value = begin + kData.size();  // fast path: one data line
    if (value < end && *value == ' ') ++value;
    const char* block_end = end;
    if (value < end && end[-1] == '\r') --end;
    fast_block_ = {begin, block_end};  // for a second read when it has a lone CR
    on_data(value, end - value, offset, now_ns);
    fast_block_ = {};
    return;
  }
  if (!cr_reread_ && has_lone_cr(begin, end - begin)) {
    reread_with_cr_line_ends(begin, end, offset, now_ns);
    return;
  }
  std::string& joined = scratch_->joined;
  joined.clear();
  int data_lines = 0;
  for (const char* line = begin; line < end;) {
    const char* line_end = static_cast<const char*>(std::memchr(line, '\n', end - line));
    if (line_end == nullptr) line_end = end;
    const char* next = line_end + 1;
    if (line_end > line && line_end[-1] == '\r') --line_end;
    if (starts_with(line, line_end, kData)) {  // ':' comments and other fields are skipped
      const char* value = line + kData.size();
      if (value < line_end && *value == ' ') ++value;
      if (data_lines++ > 0) joined.push_back('\n');
      joined.append(value, line_end - value);
    }
    line = next;
  }
  if (data_lines > 0) on_data(joined.data(), joined.size(), offset, now_ns);
}

void StreamReader::on_data(const char* begin, size_t length, uint64_t offset, int64_t now_ns) {
  while (length > 0 && (begin[length - 1] == ' ' || begin[length - 1] == '\r')) --length;
  if (length == 0) return;
  ++events_;
  if (length == 6 && std::memcmp(begin, "[DONE]", 6) == 0) {
    done_ns_ = now_ns;
    return;
  }
  record::RequestRecord& record = *record_;
  TemplateMatch match;
  if (template_.valid && match_template(template_, begin, length, match)) {
    take_template_match(begin, match, now_ns);
    return;
  }
  EventFields fields;
  std::string error_message;
  std::string& padded = scratch_->padded;
  if (padded.size() < length + simdjson::SIMDJSON_PADDING)
    padded.resize(length + simdjson::SIMDJSON_PADDING + 4096);
  std::memcpy(padded.data(), begin, length);
  // simdjson 3.0.1 On-Demand looks at padding bytes when a document is malformed (how far it
  // gets, so how much text it appends, changed with the previous event's leftover bytes):
  // fixed padding makes the full parse a function of the event alone.
  std::memset(padded.data() + length, 0, simdjson::SIMDJSON_PADDING);
  const size_t text_before = record.generated_text.size();
  if (!parse_event(scratch_->parser, padded, length, fields, record.generated_text,
                   error_message)) {
    if (!cr_reread_ && fast_block_.first != nullptr &&
        has_lone_cr(fast_block_.first, fast_block_.second - fast_block_.first)) {
      record.generated_text.resize(text_before);
      const auto [block_begin, block_end] = fast_block_;
      fast_block_ = {};
      reread_with_cr_line_ends(block_begin, block_end, offset, now_ns);
      return;
    }
    fail("malformed SSE event at byte " + std::to_string(offset));
    return;
  }
  if (template_enabled_ && fields.has_choices && !fields.has_error) {
    // Learning scans the event twice. Not from the first full parse in a row: a stream's first
    // event (a chat role chunk, the only token of a short answer) is seldom repeated, and
    // learning from it cost every 1-token request. A stream whose events keep changing shape
    // stops paying after a few tries (then tries once in a while).
    ++parses_since_hit_;
    if ((parses_since_hit_ >= 2 && parses_since_hit_ <= 5) || parses_since_hit_ % 64 == 0)
      learn_template(begin, length, text_before, fields);
  }
  take_fields(fields, error_message, now_ns);
}

void StreamReader::take_fields(const EventFields& fields, const std::string& error_message,
                               int64_t now_ns) {
  record::RequestRecord& record = *record_;
  if (fields.prompt_tokens >= 0) record.server_prompt_tokens = fields.prompt_tokens;
  if (fields.completion_tokens >= 0) record.server_completion_tokens = fields.completion_tokens;
  if (fields.has_choices) {
    if (record.first_token_ns < 0) record.first_token_ns = now_ns;
    record.last_token_ns = now_ns;
    record.chunk_ns.push_back(now_ns);
    if (fields.completion_tokens >= 0) {
      // Sized like chunk_ns on first use: most servers send no usage per chunk.
      if (record.chunk_tokens.empty()) record.chunk_tokens.reserve(record.chunk_ns.capacity());
      // A chunk's share is a difference of 64-bit counts; one past 32 bits (or negative past
      // them) is no token count of a chunk: the per-chunk counts are then dropped as unknown.
      const int64_t delta = fields.completion_tokens - last_completion_tokens_;
      if (delta > std::numeric_limits<int32_t>::max() ||
          delta < std::numeric_limits<int32_t>::min())
        choice_without_usage_ = true;
      record.chunk_tokens.push_back(static_cast<int32_t>(delta));
      last_completion_tokens_ = fields.completion_tokens;
    } else {
      choice_without_usage_ = true;
    }
    last_finish_reason_ = fields.finish_reason;
  }
  if (fields.has_error) {
    fail("server error event: " +
         (error_message.empty() ? std::string("(no message)") : error_message));
  }
}

void StreamReader::fail(std::string message) {
  failed_ = true;
  record_->success = false;
  if (record_->error.empty()) record_->error = one_line_message(message);
}

void StreamReader::finish(int64_t now_ns) {
  if (!failed_ && done_ns_ < 0 && !tail_.empty()) {
    // An event not followed by a blank line (vLLM accepts a complete last one).
    const char* begin = tail_.data();
    const char* end = begin + tail_.size();
    while (end > begin && (end[-1] == '\n' || end[-1] == '\r')) --end;
    if (end > begin) on_block(begin, end, tail_offset_, now_ns, false);
    tail_.clear();
  }
  record::RequestRecord& record = *record_;
  if (choice_without_usage_ || record.chunk_tokens.size() != record.chunk_ns.size())
    std::vector<int32_t>().swap(record.chunk_tokens);  // the records keep no unused capacity
  if (failed_) return;
  if (record.chunk_ns.empty()) {
    fail("no choices event in the stream (no first token)");
  } else if (done_ns_ < 0 && !last_finish_reason_) {
    fail("stream ended without [DONE] or finish_reason");
  } else {
    record.success = true;
    record.error.clear();
  }
}

}  // namespace servebench::client::detail
