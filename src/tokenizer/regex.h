// File: tokenizer/regex.h (internal to the tokenizer part)
// A PCRE2 pattern compiled once (UTF, Unicode properties, JIT) and matched from any thread:
// each call brings its own match data. tokenizer.json's Split and Replace patterns are written
// for Oniguruma; the constructs they use (\p{L}, \s, (?i:…), (?!…)) mean the same in PCRE2.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace servebench::tokenizer::detail {

class Regex {
 public:
  // Throws core::Error(kInput, where, …) when the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Byte ranges [begin, end) of successive non-overlapping matches in `text` (valid UTF-8),
  // appended to `out`; an empty match advances by one character, as Oniguruma's find_iter does.
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servebench::tokenizer::detail
