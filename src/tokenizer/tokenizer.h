// File: tokenizer/tokenizer.h
// Counting tokens the way the served model does. Until real tokenizers land (tokenizer.json,
// SentencePiece), the one implementation is the built-in *word rule*, shared by the simulator
// and the client so that server usage and client counts agree exactly:
//
//   A token is, scanning left to right:
//     - an optional single space followed by a run of word bytes (ASCII letters and digits, '_',
//       and every byte >= 0x80, so UTF-8 text stays whole), or
//     - an optional single space followed by one other byte (punctuation, or any control byte), or
//     - a run of whitespace (a single space right before a word or punctuation belongs to it).
//
// The vocabulary has 32,000 ids; id i decodes to " " + a six-letter word made of three
// consonant-vowel syllables (see word_for_id). Encoding such a word gives its id back; any
// other token gets a stable hash id, so decode(encode(x)) == x only for vocabulary text.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace servebench::tokenizer {

using TokenId = int32_t;

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Token ids of text, no special tokens added (vLLM counts with add_special_tokens=False).
  virtual std::vector<TokenId> encode(std::string_view text) const = 0;
  // Number of tokens encode(text) would return; implementations may count without building ids.
  virtual size_t count(std::string_view text) const { return encode(text).size(); }
  virtual std::string decode(std::span<const TokenId> ids) const = 0;
  // Text of one token as streamed (decode of a single id).
  virtual std::string token_text(TokenId id) const = 0;
  virtual int32_t vocab_size() const = 0;
  // Short label for results, e.g. "builtin-word".
  virtual std::string name() const = 0;
};

// The built-in word rule described above.
std::unique_ptr<Tokenizer> make_word_tokenizer();

// The six-letter word for a vocabulary id of the word rule (no leading space).
std::string word_for_id(TokenId id);

}  // namespace servebench::tokenizer
