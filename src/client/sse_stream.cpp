// The SSE reader's framing (sse_stream.h): event blocks split at blank lines, an unfinished
// tail carried to the next read, data lines joined, [DONE], and what each event says taken
// into the record. The event's JSON is read by the template fast path (sse_template.cpp) when
// it can, else in full (sse_event_json.cpp).
#include <cstring>
#include <utility>

#include "client/sse_event.h"
#include "core/error.h"

namespace servebench::client::detail {

namespace {

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
  body_offset_ = 0;
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
  if (tail_.empty()) {
    // Common case: whole events in this read, parsed in place.
    size_t used = scan(data, length, body_offset_, now_ns);
    if (used < length && !failed_ && done_ns_ < 0) {
      tail_.assign(data + used, length - used);
      tail_offset_ = body_offset_ + used;
    }
  } else {
    tail_.append(data, length);
    size_t used = scan(tail_.data(), tail_.size(), tail_offset_, now_ns);
    tail_.erase(0, used);
    tail_offset_ += used;
  }
  body_offset_ += length;
}

size_t StreamReader::scan(const char* buffer, size_t length, uint64_t base_offset, int64_t now_ns) {
  size_t start = 0;
  size_t search = 0;
  bool single_line = true;  // no newline in the block so far
  while (search < length) {
    if (search == start && template_.valid && template_.single_line) {
      const size_t used = template_block(buffer + start, length - start, now_ns);
      if (used > 0) {
        start = search = start + used;
        continue;
      }
    }
    const void* found = std::memchr(buffer + search, '\n', length - search);
    if (found == nullptr) break;
    size_t newline = static_cast<const char*>(found) - buffer;
    size_t next;
    if (newline + 1 < length && buffer[newline + 1] == '\n') {
      next = newline + 2;
    } else if (newline + 2 < length && buffer[newline + 1] == '\r' && buffer[newline + 2] == '\n') {
      next = newline + 3;
    } else if (newline + 1 >= length || (buffer[newline + 1] == '\r' && newline + 2 >= length)) {
      break;  // the blank line may still come with the next read
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
    if (value < end && end[-1] == '\r') --end;
    on_data(value, end - value, offset, now_ns);
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
      record.chunk_tokens.push_back(
          static_cast<int32_t>(fields.completion_tokens - last_completion_tokens_));
      last_completion_tokens_ = static_cast<int32_t>(fields.completion_tokens);
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
