#include "client/sse_stream.h"

#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <utility>

#include "core/error.h"
#include "core/json_text.h"

namespace servebench::client::detail {

struct EventFields {
  bool has_choices = false;
  bool finish_reason = false;
  int64_t prompt_tokens = -1;
  int64_t completion_tokens = -1;
  bool has_error = false;
};

namespace {

namespace od = simdjson::ondemand;

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

// ---- Template fast path ---------------------------------------------------------------------
//
// Why a template match gives exactly what parse_event would. A template is learned only from an
// event that parse_event accepted (with choices, without error) and that TemplateBuilder, a
// strict JSON scanner, accepts as a standard JSON document; its holes are the contents of the
// text strings (between their quotes) and whole number tokens. An event matches when it has the
// template's bytes outside the holes and each hole holds: for text, string content without a
// raw control character, quote, \u or unknown escape, in well-formed UTF-8; for a number, a JSON
// number; for a token count, 1 to 18 digits without a leading zero. Then:
//  - the event splits into strings and non-strings exactly as the template does (a hole holds
//    no unescaped quote and ends where the template's string or number ended), so it has the
//    template's tokens in the same order: simdjson's structural index has the same entries,
//    with the same first byte, except that a number may start with '-' instead of a digit;
//  - it is well-formed UTF-8 (the literal pieces are cut next to ASCII bytes of a well-formed
//    document, the holes are checked) and no string holds a raw control character, so
//    simdjson's stage 1 accepts it as it accepted the template;
//  - parse_event's On-Demand walk takes the template's steps: keys, types and null checks all
//    look at literal bytes or at a number's first byte; it reads hole bytes only through
//    get_string on the text holes (the bytes, with the simple escapes replaced) and get_int64
//    on the usage counts (the digits' value); numbers it skips are not looked at.
// finish_reason is literal, so its null-ness is the template's. (The full parse sees zeroed
// padding after the event, so its result depends on the event's bytes alone.) When learning, the
// template's own event must match and give the full parse's fields: a guard against the scanner's
// idea of which hole is which ever disagreeing with parse_event.

using HoleKind = EventTemplate::HoleKind;

constexpr size_t kNoMatch = static_cast<size_t>(-1);
// Events longer than this are not learned (real token events are a few hundred bytes).
constexpr size_t kMaxTemplateBytes = 16384;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_one_byte_escape(unsigned char code) {
  return code == '"' || code == '\\' || code == '/' || code == 'b' || code == 'f' || code == 'n' ||
         code == 'r' || code == 't';
}

bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// String content from `at` to its closing quote (returned, not consumed). A text hole
// (`allow_unicode_escape` false) accepts only the escapes whose meaning is one byte: \u goes to
// simdjson, which decides about surrogates. `escaped` is set when there is an escape.
size_t scan_string(const char* s, size_t at, size_t length, bool allow_unicode_escape,
                   bool& escaped) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(s);
  while (at < length) {
    if constexpr (std::endian::native == std::endian::little) {
      // Plain ASCII 8 bytes at a time: the usual token text has nothing else.
      while (length - at >= 8) {
        const size_t plain = core::first_json_special_of_8</*kNonAscii=*/true>(s + at);
        at += plain;
        if (plain < 8) break;
      }
      if (at >= length) break;
    }
    const unsigned char c = bytes[at];
    if (c == '"') return at;
    if (c == '\\') {
      if (at + 1 >= length) return kNoMatch;
      escaped = true;
      if (is_one_byte_escape(bytes[at + 1])) {
        at += 2;
      } else if (allow_unicode_escape && bytes[at + 1] == 'u' && length - at >= 6 &&
                 is_hex(s[at + 2]) && is_hex(s[at + 3]) && is_hex(s[at + 4]) && is_hex(s[at + 5])) {
        at += 6;
      } else {
        return kNoMatch;
      }
    } else if (c < 0x20) {
      return kNoMatch;
    } else if (c < 0x80) {
      ++at;
    } else {
      const int size = core::utf8_char_at(std::string_view(s, length), at);
      if (size < 2) return kNoMatch;
      at += static_cast<size_t>(size);
    }
  }
  return kNoMatch;
}

size_t scan_text(const char* s, size_t at, size_t length, bool& escaped) {
  return scan_string(s, at, length, false, escaped);
}

// Any JSON string content (keys and literal strings, when learning).
size_t scan_json_string(const char* s, size_t at, size_t length) {
  bool escaped = false;
  return scan_string(s, at, length, true, escaped);
}

// A JSON number token from `at`: its end. The caller checks what follows.
size_t scan_number(const char* s, size_t at, size_t length) {
  if (at < length && s[at] == '-') ++at;
  if (at >= length) return kNoMatch;
  if (s[at] == '0') {
    ++at;
  } else if (is_digit(s[at])) {
    while (at < length && is_digit(s[at])) ++at;
  } else {
    return kNoMatch;
  }
  if (at < length && s[at] == '.') {
    const size_t first = ++at;
    while (at < length && is_digit(s[at])) ++at;
    if (at == first) return kNoMatch;
  }
  if (at < length && (s[at] == 'e' || s[at] == 'E')) {
    ++at;
    if (at < length && (s[at] == '+' || s[at] == '-')) ++at;
    const size_t first = at;
    while (at < length && is_digit(s[at])) ++at;
    if (at == first) return kNoMatch;
  }
  return at;
}

// A token count: 0, or up to 18 digits not starting with 0 (no overflow, as get_int64). More
// digits are left to the literal that follows, which never starts with a digit, to reject.
size_t scan_count(const char* s, size_t at, size_t length, int64_t& value) {
  if (at >= length || !is_digit(s[at])) return kNoMatch;
  if (s[at] == '0') {
    value = 0;
    return at + 1;
  }
  const size_t first = at;
  int64_t total = 0;
  while (at < length && at - first < 18 && is_digit(s[at])) total = total * 10 + (s[at++] - '0');
  value = total;
  return at;
}

}  // namespace

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

namespace {

// memcmp(a, b, size) == 0 for the template's literals, inline: most are short, and only equality
// matters. Long ones (an event's id and object prefix, its closing fields: ~80 bytes each) are
// compared 16 bytes at a time (SSE2 on x86-64, through GCC's vector extension).
bool bytes_equal(const char* a, const char* b, size_t size) {
  if (size < 8) {
    for (size_t i = 0; i < size; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  if (size < 16) {  // two overlapping 8-byte words
    uint64_t x[2];
    uint64_t y[2];
    std::memcpy(&x[0], a, 8);
    std::memcpy(&y[0], b, 8);
    std::memcpy(&x[1], a + size - 8, 8);
    std::memcpy(&y[1], b + size - 8, 8);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
  }
  using Bytes16 = uint64_t __attribute__((vector_size(16)));
  Bytes16 differ{};
  Bytes16 x;
  Bytes16 y;
  for (size_t i = 0; i + 16 <= size; i += 16) {
    std::memcpy(&x, a + i, 16);
    std::memcpy(&y, b + i, 16);
    differ |= x ^ y;
  }
  std::memcpy(&x, a + size - 16, 16);  // the last 16 bytes (overlapping the loop's) cover the rest
  std::memcpy(&y, b + size - 16, 16);
  differ |= x ^ y;
  return (differ[0] | differ[1]) == 0;
}

// How many bytes from `event` (at most `length`) match the template, or kNoMatch.
size_t match_template_prefix(const EventTemplate& pattern, const char* event, size_t length,
                             TemplateMatch& match) {
  const char* literal = pattern.bytes.data();
  size_t literal_at = 0;
  size_t at = 0;
  for (uint32_t i = 0;; ++i) {
    const bool last = i == pattern.hole_count;
    const size_t literal_end = last ? pattern.bytes.size() : pattern.holes[i].begin;
    const size_t size = literal_end - literal_at;
    if (length - at < size || !bytes_equal(event + at, literal + literal_at, size)) return kNoMatch;
    at += size;
    if (last) return at;
    const EventTemplate::Hole& hole = pattern.holes[i];
    size_t end = kNoMatch;
    switch (hole.kind) {
      case HoleKind::kText:
        end = scan_text(event, at, length, match.escaped);
        if (end != kNoMatch) match.text[match.text_count++] = {at, end - at};
        break;
      case HoleKind::kNumber:
        end = scan_number(event, at, length);
        break;
      case HoleKind::kPromptTokens:
        end = scan_count(event, at, length, match.prompt_tokens);
        break;
      case HoleKind::kCompletionTokens:
        end = scan_count(event, at, length, match.completion_tokens);
        break;
    }
    if (end == kNoMatch) return kNoMatch;
    at = end;
    literal_at = hole.end;
  }
}

// Whether the whole event matches the template.
bool match_template(const EventTemplate& pattern, const char* event, size_t length,
                    TemplateMatch& match) {
  return match_template_prefix(pattern, event, length, match) == length;
}

// Appends text hole content as get_string would give it (scan_text let only one-byte escapes in).
void append_text(std::string& out, const char* text, size_t length, bool escaped) {
  if (!escaped) {
    out.append(text, length);
    return;
  }
  const char* end = text + length;
  while (text < end) {
    const char* slash = static_cast<const char*>(std::memchr(text, '\\', end - text));
    if (slash == nullptr) slash = end;
    out.append(text, slash - text);
    if (slash == end) return;
    const char code = slash[1];
    out.push_back(code == 'b'   ? '\b'
                  : code == 'f' ? '\f'
                  : code == 'n' ? '\n'
                  : code == 'r' ? '\r'
                  : code == 't' ? '\t'
                                : code);  // '"', '\\' and '/' stand for themselves
    text = slash + 2;
  }
}

// Splits a template event into literals and holes. Strict JSON only: anything else, or a shape
// that parse_event would read differently from what the holes assume (a duplicate key that
// parse_event looks at, a value of another type where it reads one), leaves no template.
class TemplateBuilder {
 public:
  explicit TemplateBuilder(EventTemplate& pattern)
      : pattern_(pattern), s_(pattern.bytes.data()), length_(pattern.bytes.size()) {}

  bool build() {
    pattern_.hole_count = 0;
    skip_space();
    if (!value(Role::kTop, 0)) return false;
    skip_space();
    return at_ == length_;
  }

 private:
  // What parse_event does with a value, by where it sits.
  enum class Role : uint8_t {
    kOther,       // skipped
    kTop,         // the event object
    kChoices,     // top-level "choices"
    kChoice,      // choices[0]
    kText,        // choices[0].text, choices[0].delta.{content,reasoning_content,reasoning}
    kDelta,       // choices[0].delta
    kFinish,      // choices[0].finish_reason: only its null-ness is read
    kUsage,       // top-level "usage"
    kPrompt,      // usage.prompt_tokens
    kCompletion,  // usage.completion_tokens
    kError,       // top-level "error": only null can be learned
  };
  static constexpr int kMaxDepth = 64;

  // The role of member `key` of an object in `role`, and a bit to refuse duplicates of it.
  static Role member_role(Role role, std::string_view key, unsigned& bit) {
    struct Member {
      std::string_view key;
      Role role;
    };
    static constexpr Member kTopMembers[] = {
        {"choices", Role::kChoices}, {"usage", Role::kUsage}, {"error", Role::kError}};
    static constexpr Member kChoiceMembers[] = {
        {"text", Role::kText}, {"delta", Role::kDelta}, {"finish_reason", Role::kFinish}};
    static constexpr Member kDeltaMembers[] = {
        {"content", Role::kText}, {"reasoning_content", Role::kText}, {"reasoning", Role::kText}};
    static constexpr Member kUsageMembers[] = {{"prompt_tokens", Role::kPrompt},
                                               {"completion_tokens", Role::kCompletion}};
    std::span<const Member> members;
    if (role == Role::kTop) members = kTopMembers;
    if (role == Role::kChoice) members = kChoiceMembers;
    if (role == Role::kDelta) members = kDeltaMembers;
    if (role == Role::kUsage) members = kUsageMembers;
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].key == key) {  // raw bytes, as parse_event compares keys
        bit = 1u << i;
        return members[i].role;
      }
    }
    bit = 0;
    return Role::kOther;
  }

  void skip_space() {
    while (at_ < length_ && is_json_space(s_[at_])) ++at_;
  }

  bool add_hole(size_t begin, size_t end, HoleKind kind) {
    if (pattern_.hole_count == EventTemplate::kMaxHoles) return false;
    pattern_.holes[pattern_.hole_count++] = {static_cast<uint32_t>(begin),
                                             static_cast<uint32_t>(end), kind};
    return true;
  }

  bool word(std::string_view text) {
    if (length_ - at_ < text.size() || std::memcmp(s_ + at_, text.data(), text.size()) != 0)
      return false;
    at_ += text.size();
    return true;
  }

  bool value(Role role, int depth) {
    if (at_ >= length_ || depth > kMaxDepth) return false;
    const char c = s_[at_];
    const bool any = role == Role::kOther || role == Role::kFinish;
    if (c == '{') {
      if (!any && role != Role::kTop && role != Role::kChoice && role != Role::kDelta &&
          role != Role::kUsage)
        return false;
      return object(role, depth + 1);
    }
    if (c == '[') {
      if (!any && role != Role::kChoices) return false;
      return array(role, depth + 1);
    }
    if (c == '"') {
      const size_t begin = at_ + 1;
      size_t end;
      if (role == Role::kText) {
        bool escaped = false;
        end = scan_text(s_, begin, length_, escaped);
        if (end == kNoMatch || !add_hole(begin, end, HoleKind::kText)) return false;
      } else {
        if (!any) return false;
        end = scan_json_string(s_, begin, length_);
        if (end == kNoMatch) return false;
      }
      at_ = end + 1;
      return true;
    }
    if (c == '-' || is_digit(c)) {
      const size_t end = scan_number(s_, at_, length_);
      if (end == kNoMatch) return false;
      HoleKind kind = HoleKind::kNumber;
      if (role == Role::kPrompt || role == Role::kCompletion) {
        int64_t count = 0;
        if (scan_count(s_, at_, length_, count) != end) return false;
        kind = role == Role::kPrompt ? HoleKind::kPromptTokens : HoleKind::kCompletionTokens;
      } else if (!any) {
        return false;
      }
      if (!add_hole(at_, end, kind)) return false;
      at_ = end;
      return true;
    }
    if (word("null")) {
      return any || role == Role::kText || role == Role::kDelta || role == Role::kUsage ||
             role == Role::kPrompt || role == Role::kCompletion || role == Role::kError;
    }
    return any && (word("true") || word("false"));
  }

  bool object(Role role, int depth) {
    ++at_;  // '{'
    skip_space();
    if (at_ < length_ && s_[at_] == '}') {
      ++at_;
      return true;
    }
    unsigned seen = 0;
    for (;;) {
      if (at_ >= length_ || s_[at_] != '"') return false;
      const size_t key_begin = at_ + 1;
      const size_t key_end = scan_json_string(s_, key_begin, length_);
      if (key_end == kNoMatch) return false;
      at_ = key_end + 1;
      skip_space();
      if (at_ >= length_ || s_[at_] != ':') return false;
      ++at_;
      skip_space();
      unsigned bit = 0;
      const Role child =
          member_role(role, std::string_view(s_ + key_begin, key_end - key_begin), bit);
      if ((seen & bit) != 0) return false;
      seen |= bit;
      if (!value(child, depth)) return false;
      skip_space();
      if (at_ >= length_) return false;
      if (s_[at_] == '}') {
        ++at_;
        return true;
      }
      if (s_[at_] != ',') return false;
      ++at_;
      skip_space();
    }
  }

  bool array(Role role, int depth) {
    ++at_;  // '['
    skip_space();
    if (at_ < length_ && s_[at_] == ']') {
      ++at_;
      return role != Role::kChoices;  // no choice: nothing to learn
    }
    for (size_t index = 0;; ++index) {
      const Role child = role == Role::kChoices && index == 0 ? Role::kChoice : Role::kOther;
      if (!value(child, depth)) return false;
      skip_space();
      if (at_ >= length_) return false;
      if (s_[at_] == ']') {
        ++at_;
        return true;
      }
      if (s_[at_] != ',') return false;
      ++at_;
      skip_space();
    }
  }

  EventTemplate& pattern_;
  const char* s_;
  size_t length_;
  size_t at_ = 0;
};

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

// A whole "data: <event>" block with its blank line, matched in place: the match itself bounds
// the event, so the newline search of scan() is skipped. Only for templates without '\n' (no
// hole can hold one), so the first newline after the prefix is the one the match ends at, as
// scan() would have found it; the endings accepted are those scan() and on_block() accept.
size_t StreamReader::template_block(const char* block, size_t available, int64_t now_ns) {
  constexpr std::string_view kPrefix = "data: ";
  if (available <= kPrefix.size() || std::memcmp(block, kPrefix.data(), kPrefix.size()) != 0)
    return 0;
  const char* event = block + kPrefix.size();
  TemplateMatch match;
  const size_t length = match_template_prefix(template_, event, available - kPrefix.size(), match);
  if (length == kNoMatch) return 0;
  const char* end = event + length;
  const char* limit = block + available;
  if (end < limit && *end == '\r') ++end;  // "\r\n" ends the line as well
  if (limit - end < 2 || end[0] != '\n') return 0;
  if (end[1] == '\n') {
    end += 2;
  } else if (limit - end >= 3 && end[1] == '\r' && end[2] == '\n') {
    end += 3;
  } else {
    return 0;
  }
  ++events_;
  take_template_match(event, match, now_ns);
  return static_cast<size_t>(end - block);
}

void StreamReader::take_template_match(const char* event, const TemplateMatch& match,
                                       int64_t now_ns) {
  ++template_hits_;
  parses_since_hit_ = 0;
  for (uint32_t i = 0; i < match.text_count; ++i)
    append_text(record_->generated_text, event + match.text[i].begin, match.text[i].length,
                match.escaped);
  EventFields fields;
  fields.has_choices = true;
  fields.finish_reason = template_.finish_reason;
  fields.prompt_tokens = match.prompt_tokens;
  fields.completion_tokens = match.completion_tokens;
  take_fields(fields, {}, now_ns);
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

void StreamReader::learn_template(const char* begin, size_t length, size_t text_before,
                                  const EventFields& fields) {
  if (length > kMaxTemplateBytes) return;
  // Built aside: when this event gives no template, the current one (still exact) stays.
  EventTemplate& candidate = template_candidate_;
  candidate.valid = false;
  candidate.bytes.assign(begin, length);
  if (!TemplateBuilder(candidate).build()) return;
  // The event must match its own template and give what parse_event gave.
  TemplateMatch match;
  if (!match_template(candidate, begin, length, match) ||
      match.prompt_tokens != fields.prompt_tokens ||
      match.completion_tokens != fields.completion_tokens)
    return;
  template_check_.clear();
  for (uint32_t i = 0; i < match.text_count; ++i)
    append_text(template_check_, begin + match.text[i].begin, match.text[i].length, match.escaped);
  if (std::string_view(record_->generated_text).substr(text_before) != template_check_) return;
  candidate.finish_reason = fields.finish_reason;
  candidate.single_line = candidate.bytes.find('\n') == std::string::npos;
  candidate.valid = true;
  std::swap(template_, candidate);
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
