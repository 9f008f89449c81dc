#include "client/sse_stream.h"

#include <cstring>
#include <utility>

#include "core/error.h"

namespace servebench::client::detail {

namespace {

namespace od = simdjson::ondemand;

struct EventFields {
  bool has_choices = false;
  bool finish_reason = false;
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  bool has_error = false;
};

// Appends a string value to `out`; null is accepted (vLLM treats it as ""), anything else is
// malformed.
bool append_string(od::value& value, std::string& out) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  if (type != od::json_type::string) return false;
  std::string_view text;
  if (value.get_string().get(text)) return false;
  out.append(text);
  return true;
}

bool read_delta(od::value& value, std::string& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::object delta;
  if (value.get_object().get(delta)) return false;
  for (auto field_result : delta) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    // Reasoning models stream their thinking first; it is generated output like the rest.
    if (key == "content" || key == "reasoning_content" || key == "reasoning") {
      if (!append_string(field.value(), text)) return false;
    }
  }
  return true;
}

bool read_choices(od::value& value, EventFields& fields, std::string& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::array choices;
  if (value.get_array().get(choices)) return false;
  for (auto element_result : choices) {
    od::value element;
    if (std::move(element_result).get(element)) return false;
    if (fields.has_choices) continue;  // only choices[0] matters (n = 1)
    fields.has_choices = true;
    od::object choice;
    if (element.get_object().get(choice)) return false;
    for (auto field_result : choice) {
      od::field field;
      if (std::move(field_result).get(field)) return false;
      od::raw_json_string key = field.key();
      if (key == "text") {
        if (!append_string(field.value(), text)) return false;
      } else if (key == "delta") {
        if (!read_delta(field.value(), text)) return false;
      } else if (key == "finish_reason") {
        bool is_null = false;
        if (field.value().is_null().get(is_null)) return false;
        fields.finish_reason = !is_null;
      }
    }
  }
  return true;
}

bool read_usage(od::value& value, EventFields& fields) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  od::object usage;
  if (value.get_object().get(usage)) return false;
  for (auto field_result : usage) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    int64_t* target = key == "prompt_tokens"       ? &fields.prompt_tokens
                      : key == "completion_tokens" ? &fields.completion_tokens
                                                   : nullptr;
    if (target == nullptr) continue;
    bool is_null = false;
    if (field.value().is_null().get(is_null)) return false;
    if (is_null) continue;
    if (field.value().get_int64().get(*target)) return false;
  }
  return true;
}

// The server's message from "error": a string, or an object's "message".
bool read_error(od::value& value, EventFields& fields, std::string& message) {
  od::json_type type;
  if (value.type().get(type)) return false;
  if (type == od::json_type::null) return true;
  fields.has_error = true;
  if (type == od::json_type::string) return append_string(value, message);
  if (type != od::json_type::object) return true;
  od::object error;
  if (value.get_object().get(error)) return false;
  for (auto field_result : error) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    if (key == "message") {
      od::json_type message_type;
      if (field.value().type().get(message_type)) return false;
      if (message_type == od::json_type::string && !append_string(field.value(), message))
        return false;
    }
  }
  return true;
}

// Parses one event; text goes straight into `text`, an error message into `error_message`.
bool parse_event(od::parser& parser, const std::string& padded, size_t length, EventFields& fields,
                 std::string& text, std::string& error_message) {
  od::document document;
  if (parser.iterate(padded.data(), length, padded.size()).get(document)) return false;
  od::object object;
  if (document.get_object().get(object)) return false;
  for (auto field_result : object) {
    od::field field;
    if (std::move(field_result).get(field)) return false;
    // The raw key, compared without unescaping: the keys we look for have no escapes.
    od::raw_json_string key = field.key();
    if (key == "choices") {
      if (!read_choices(field.value(), fields, text)) return false;
    } else if (key == "usage") {
      if (!read_usage(field.value(), fields)) return false;
    } else if (key == "error") {
      if (!read_error(field.value(), fields, error_message)) return false;
    }
  }
  // Nothing may follow the object (simdjson 3.0 has no document::at_end()).
  return document.current_location().error() == simdjson::OUT_OF_BOUNDS;
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
  body_offset_ = 0;
  events_ = 0;
  done_ns_ = -1;
  last_completion_tokens_ = 0;
  failed_ = false;
  choice_without_usage_ = false;
  last_finish_reason_ = false;
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
  while (search < length) {
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
      continue;
    }
    on_block(buffer + start, buffer + newline, base_offset + start, now_ns);
    start = search = next;
    if (failed_ || done_ns_ >= 0) return length;
  }
  return start;
}

// One event block (without its terminating blank line): lines of "field: value".
void StreamReader::on_block(const char* begin, const char* end, uint64_t offset, int64_t now_ns) {
  constexpr std::string_view kData = "data:";
  if (starts_with(begin, end, kData) && std::memchr(begin, '\n', end - begin) == nullptr) {
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
  std::string& padded = scratch_->padded;
  if (padded.size() < length + simdjson::SIMDJSON_PADDING)
    padded.resize(length + simdjson::SIMDJSON_PADDING + 4096);
  std::memcpy(padded.data(), begin, length);

  record::RequestRecord& record = *record_;
  EventFields fields;
  std::string error_message;
  if (!parse_event(scratch_->parser, padded, length, fields, record.generated_text,
                   error_message)) {
    fail("malformed SSE event at byte " + std::to_string(offset));
    return;
  }
  if (fields.prompt_tokens >= 0) record.server_prompt_tokens = fields.prompt_tokens;
  if (fields.completion_tokens >= 0) record.server_completion_tokens = fields.completion_tokens;
  if (fields.has_choices) {
    if (record.first_token_ns < 0) record.first_token_ns = now_ns;
    record.last_token_ns = now_ns;
    record.chunk_ns.push_back(now_ns);
    if (fields.completion_tokens >= 0) {
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
    if (end > begin) on_block(begin, end, tail_offset_, now_ns);
    tail_.clear();
  }
  record::RequestRecord& record = *record_;
  if (choice_without_usage_ || record.chunk_tokens.size() != record.chunk_ns.size())
    record.chunk_tokens.clear();
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
