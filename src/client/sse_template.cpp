// The SSE reader's fast path (sse_stream.h): an event that repeats the last fully parsed one's
// bytes but for its text and numbers is read from those holes, without simdjson. Learning a
// template (TemplateBuilder), matching an event against it, and the reader's steps that use them.
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
#include <array>
#include <bit>
#include <cstring>
#include <span>
#include <utility>

#include "client/sse_event.h"
#include "core/json_text.h"

namespace servebench::client::detail {

namespace {

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

}  // namespace

// Whether the whole event matches the template.
bool match_template(const EventTemplate& pattern, const char* event, size_t length,
                    TemplateMatch& match) {
  return match_template_prefix(pattern, event, length, match) == length;
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

}  // namespace servebench::client::detail
