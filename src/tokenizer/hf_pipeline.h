// File: tokenizer/hf_pipeline.h (internal to the tokenizer part)
// The text-shaping stages of a Hugging Face tokenizer.json around the model: normalizers,
// pre-tokenizers and decoders, each read from its JSON. Semantics follow Hugging Face's
// tokenizers (Rust) crate; docs/tokenizers.md lists what is supported. Anything else is a
// core::Error naming the file, the JSON path and the component, never an approximation.
#pragma once

#include <simdjson.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/json_place.h"

namespace servebench::tokenizer::detail {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void apply(std::string& text) const = 0;
};

// A piece of text on its way to the model.
struct Piece {
  std::string_view text;
  bool at_origin = false;  // starts at offset 0 of the input (Metaspace's prepend_scheme "first")
};

// Text a pre-tokenizer rewrote; pieces point into it, so it must not move (hence a deque).
using Arena = std::deque<std::string>;

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Appends the pieces `in` splits into (possibly rewritten) to `out`; empty pieces are dropped.
  virtual void split(const std::vector<Piece>& in, std::vector<Piece>& out, Arena& arena) const = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings in place (Hugging Face's decode_chain).
  virtual void decode(std::vector<std::string>& tokens) const = 0;
};

struct PreTokenizerChain {
  std::vector<std::unique_ptr<PreTokenizer>> steps;  // no-op steps are left out
  bool byte_level = false;  // ends with ByteLevel: the model sees bytes (GPT-2 alphabet)
};

struct DecoderChain {
  std::vector<std::unique_ptr<Decoder>> steps;
  bool present = false;          // false: tokens are joined with " ", as Hugging Face does
  bool only_byte_level = false;  // exactly one ByteLevel decoder: decode can work on bytes
};

// Each reads the value of tokenizer.json's "normalizer" / "pre_tokenizer" / "decoder" (nullopt
// when missing or null); Sequence is flattened.
using OptionalJson = std::optional<simdjson::dom::element>;
std::vector<std::unique_ptr<Normalizer>> parse_normalizer(OptionalJson e, const JsonPlace& place);
PreTokenizerChain parse_pre_tokenizer(OptionalJson e, const JsonPlace& place);
DecoderChain parse_decoder(OptionalJson e, const JsonPlace& place);

// Appends a byte-level token's bytes: each character mapped back through GPT-2's alphabet, or
// the token's own UTF-8 when a character is outside it (added tokens such as "<｜User｜>").
void append_byte_level_bytes(std::string& bytes, std::string_view token);

// Replaces every `from` in `text` with `to` (the Replace normalizer and decoder).
void replace_all(std::string& text, std::string_view from, std::string_view to);

// Metaspace's prepend_scheme (or the older add_prefix_space), shared by the pre-tokenizer and
// the decoder of that name.
enum class PrependScheme { kAlways, kFirst, kNever };
PrependScheme metaspace_scheme(simdjson::dom::object o, const JsonPlace& place);

// Calls add(item, place) for each element of the array member `key` (a Sequence's list).
template <typename Add>
void for_each_item(simdjson::dom::object o, const char* key, const JsonPlace& place, Add&& add) {
  auto list = member(o, key);
  if (!list) place.at(key).fail("is required");
  size_t i = 0;
  for (auto item : as_array(*list, place.at(key))) add(item, place.at(key).at(i++));
}

// Code point `c` is a word character for Rust regex's \w (added tokens' single_word rule).
bool is_word_char(char32_t c);

}  // namespace servebench::tokenizer::detail
