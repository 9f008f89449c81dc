// File: dataset/test_support.h (the dataset part's tests only)
// A toy tokenizer whose re-encoding changes lengths, so that tests see truncation and padding;
// scripts/gen-numpy-expectations.py has the same one in Python.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace servebench::dataset::test_support {

using tokenizer::TokenId;

// One letter per token when encoding ('a' + id). Decoding: ids 0..19 are 'a'..'t', 20..25 are
// "wide" ("aa".."ff": re-encoding yields more tokens than were decoded), the rest "empty" (no
// text: fewer).
class CharTokenizer : public tokenizer::Tokenizer {
 public:
  CharTokenizer(int32_t vocab, bool extra_token) : vocab_(vocab), extra_token_(extra_token) {}
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> ids;
    for (char c : text) ids.push_back(c - 'a');
    if (extra_token_) ids.push_back(0);  // never converges: always one token too many
    return ids;
  }
  std::string decode(std::span<const TokenId> ids) const override {
    std::string s;
    for (TokenId id : ids) s += token_text(id);
    return s;
  }
  std::string token_text(TokenId id) const override {
    if (id < 20) return std::string(1, static_cast<char>('a' + id));
    if (id < 26) return std::string(2, static_cast<char>('a' + id - 20));  // wide
    return "";                                                             // empty
  }
  int32_t vocab_size() const override { return vocab_; }
  std::string name() const override { return "test-chars"; }

 private:
  int32_t vocab_;
  bool extra_token_;
};

}  // namespace servebench::dataset::test_support
