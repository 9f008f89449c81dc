// File: tokenizer/tokenizer.h
// Counting tokens the way the served model does, shared by the simulator and the client so that
// server usage and client counts agree exactly. Three kinds (docs/tokenizers.md):
//   - Hugging Face tokenizer.json files with a BPE model (byte-level as in Llama 3, Qwen,
//     DeepSeek V3; SentencePiece-style with byte fallback as in Llama 2, Mistral), natively,
//     with ids identical to Hugging Face's tokenizers library;
//   - SentencePiece .model files, through libsentencepiece;
//   - the built-in *word rule*, for runs without a real tokenizer:
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

// Every method may be called from several threads at once (datasets settle prompts on every
// core; the simulator's I/O threads share one tokenizer).
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
  // At least 1: loading refuses a tokenizer file with an empty vocabulary.
  virtual int32_t vocab_size() const = 0;
  // Short label for results, e.g. "builtin-word".
  virtual std::string name() const = 0;
};

// The built-in word rule described above.
std::unique_ptr<Tokenizer> make_word_tokenizer();

// What `--tokenizer` names: "builtin" (the word rule), a tokenizer.json or SentencePiece .model
// file, a directory holding one (tokenizer.json first), or a model id ("ORG/NAME") whose
// snapshot is in the local Hugging Face cache. name() is `spec`. Throws core::Error(kInput)
// naming the file and the place when it cannot (not found, malformed, unsupported component).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& spec);

// The tokenizer file `spec` resolves to, or "" when none: `spec` itself when a file; a
// directory's tokenizer.json or tokenizer.model; the same in the snapshot refs/main names (else
// the newest) of <hub cache>/models--ORG--NAME for a model id. Nothing is downloaded.
std::string find_tokenizer_file(const std::string& spec);

// The Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub ("" without HOME).
std::string hf_hub_cache_dir();

// A tokenizer.json's text; `file` names it in errors, `name` is what name() returns.
std::unique_ptr<Tokenizer> parse_hf_tokenizer_json(std::string_view json, const std::string& file,
                                                   const std::string& name);

// A SentencePiece model file, through libsentencepiece.
std::unique_ptr<Tokenizer> load_sentencepiece_model(const std::string& path,
                                                    const std::string& name);

// The six-letter word for a vocabulary id of the word rule (no leading space).
std::string word_for_id(TokenId id);

}  // namespace servebench::tokenizer
