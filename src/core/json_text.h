// File: core/json_text.h
// Scanning JSON string content eight bytes at a time, for the hot paths that read (the client's
// SSE reader) and write (the per-request records) token text, which is mostly plain ASCII.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace servebench::core {

// Where the first byte that a JSON string cannot hold as it is (a quote, a backslash, a control
// character; with `kNonAscii` also any byte >= 0x80) sits among the 8 bytes at `p`; 8 if none
// does. Bit tricks on a little-endian word: the lowest flagged byte of "has zero byte" / "has
// byte less than" is always a true match (borrows only move upward). Callers check
// std::endian::native first.
template <bool kNonAscii>
size_t first_json_special_of_8(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  uint64_t word;
  std::memcpy(&word, p, sizeof word);
  auto zero_bytes = [](uint64_t v) { return (v - kOnes) & ~v & kHighs; };
  uint64_t special = zero_bytes(word ^ (kOnes * '"')) | zero_bytes(word ^ (kOnes * '\\')) |
                     ((word - kOnes * 0x20) & ~word & kHighs);
  if constexpr (kNonAscii) special |= word & kHighs;
  return special == 0 ? 8 : static_cast<size_t>(std::countr_zero(special)) / 8;
}

// Length of the well-formed UTF-8 character at text[i] (1 to 4), or the length of its maximal
// ill-formed prefix (at least 1) negated: the Unicode standard's table 3-7 of well-formed
// sequences (no overlong form, no surrogate, nothing past U+10FFFF). JSON text must be UTF-8.
int utf8_char_at(std::string_view text, size_t i);

// Whether `text` is well-formed UTF-8 throughout (utf8_char_at's table).
bool is_valid_utf8(std::string_view text);

// The one sanitizer for outside text bound for JSON (labels, metadata, server text, metric
// labels, errors): every byte that is not part of well-formed UTF-8 is written as `prefix` and
// two upper-case hex digits, e.g. a Latin-1 "é" as the four characters `\xE9`; well-formed text
// passes unchanged. Never fails: nlohmann's dump throws on invalid UTF-8 ("incomplete UTF-8
// string"), which once lost a whole result after the run.
void append_valid_utf8(std::string& out, std::string_view text, std::string_view prefix = "\\x");
std::string valid_utf8_text(std::string_view text);

// Appends `text` as the inside of a JSON string (no quotes), escaped as nlohmann::json's dump
// escapes it (ensure_ascii off): '"' and '\\' with a backslash, \b \f \n \r \t by name, other
// control characters as \u00xx, every other byte as it is (UTF-8 is the caller's concern).
void append_json_escaped(std::string& out, std::string_view text);

}  // namespace servebench::core
