// File: dataset/token_pool.h (internal to the dataset part)
// The `round-trip` rule of the random dataset (docs/run.md, "The `random` dataset"): a pool of a
// tokenizer's whole-word tokens whose texts, in any order, encode back to exactly those ids, so
// a prompt of n pool tokens is n tokens without re-encoding it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace servebench::dataset {

// A pool token t qualifies when, with lead(t) = decode([t]) and inner(t) = what decode([t, t])
// adds after lead(t):
//   - inner(t) is a space followed by ASCII letters only (one whole word: byte-level regexes
//     split before every " word", SentencePiece merges never cross "▁"), and lead(t) is inner(t)
//     or inner(t) without its space (a decoder that strips the text's first space);
//   - encode(lead(t)) == [t] and encode(lead(t) + inner(t)) == [t, t].
// Then the pool as a whole is checked: its tokens in id order, reversed and shuffled, joined,
// must decode to lead + inner texts and encode back to exactly the same ids.
class RoundTripPool {
 public:
  // Builds the pool (once per run: ~0.1–0.5 s, on every core). Throws core::Error(kUsage,
  // "--random-token-rule", …) naming the tokenizer when it has no such tokens or when the joined
  // check fails (its pre-tokenizer does not keep words apart).
  explicit RoundTripPool(const tokenizer::Tokenizer& tokenizer);

  size_t size() const { return ids_.size(); }
  tokenizer::TokenId id(size_t index) const { return ids_[index]; }
  // The text of pool tokens `indexes` (pool positions, not token ids), in order: what
  // tokenizer.decode of their ids gives, built without decoding.
  std::string text(const std::vector<uint32_t>& indexes) const;
  // Appends the text of `count` consecutive pool tokens from position `first` (wrapping around
  // the pool's end) to `out`; `at_start`: they begin the text (the first is written as lead).
  // The inner texts lie back to back in pool order, so a run is one or two copies.
  void append_run(std::string& out, size_t first, size_t count, bool at_start) const;
  // Bytes append_run adds.
  size_t run_bytes(size_t first, size_t count, bool at_start) const;

 private:
  std::vector<tokenizer::TokenId> ids_;  // ascending
  std::vector<std::string> lead_;
  std::string inner_;                 // every token's inner text, in pool order
  std::vector<size_t> inner_offset_;  // token k's inner text is [offset[k], offset[k + 1])
};

}  // namespace servebench::dataset
