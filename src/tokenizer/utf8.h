// File: tokenizer/utf8.h (internal to the tokenizer part)
// UTF-8 helpers shared by the tokenizer.json pipeline: validation, Rust's from_utf8_lossy
// replacement rule, and GPT-2's byte-level alphabet (each byte shown as a printable character).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace servebench::tokenizer::detail {

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `bytes` with every maximal ill-formed subsequence replaced by U+FFFD, as Rust's
// String::from_utf8_lossy (and so Hugging Face's decoders) do.
std::string utf8_lossy(std::string_view bytes);

// Length in bytes of the UTF-8 character starting at `lead` (1 for a stray byte).
inline size_t utf8_char_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? (lead < 0xC0 ? 1 : 2) : lead < 0xF0 ? 3 : 4;
}

// Code point of the valid UTF-8 character at text[i]; advances i past it.
char32_t next_code_point(std::string_view text, size_t& i);

void append_utf8(std::string& out, char32_t cp);

// GPT-2's byte-level alphabet: byte b is shown as code point byte_to_code_point()[b].
const std::array<char32_t, 256>& byte_to_code_point();
// The byte a byte-level code point stands for, or -1 when cp is not in the alphabet.
int code_point_to_byte(char32_t cp);

// Unicode White_Space (Rust's char::is_whitespace).
bool is_unicode_whitespace(char32_t cp);

}  // namespace servebench::tokenizer::detail
