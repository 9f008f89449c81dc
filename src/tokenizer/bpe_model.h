// File: tokenizer/bpe_model.h (internal to the tokenizer part)
// Byte-pair encoding of one pre-tokenized piece, as Hugging Face's BPE model does it: start
// from single characters (or bytes, for byte-level vocabularies), then repeatedly apply the
// lowest-ranked merge, leftmost first. The vocabulary and the merges are flat open-addressing
// tables (one probe, no pointer chasing: the random dataset's text hits cold entries); results
// are cached per thread in a direct-mapped table of fixed-size entries, keyed by the piece.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer::detail {

struct BpeOptions {
  bool byte_level = false;     // pieces are raw bytes; vocabulary keys were mapped back to bytes
  bool byte_fallback = false;  // unknown characters become <0xXX> tokens
  bool ignore_merges = false;  // a piece that is a vocabulary entry is that one token
  bool fuse_unk = false;       // consecutive unknown characters make one unk token
  std::optional<TokenId> unk_id;
};

class BpeModel {
 public:
  // A merge whose part (or result) is not in the vocabulary.
  struct BadMerge {
    size_t rank;
    std::string token;
  };
  // `vocab` keys are what pieces are matched against (raw bytes for byte-level); `merges` are
  // pairs of such keys in rank order. Throws BadMerge (the caller names the JSON place).
  BpeModel(const std::vector<std::pair<std::string, TokenId>>& vocab,
           const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options);
  ~BpeModel();

  // Appends the ids of `piece` to `out`.
  void encode(std::string_view piece, std::vector<TokenId>& out) const;

 private:
  struct VocabTable;
  struct MergeTable;

  std::optional<TokenId> find(std::string_view key) const;
  void merge_piece(std::string_view piece, std::vector<TokenId>& out) const;
  // The initial symbols of `piece` (bytes, characters, byte fallback, unk) appended to `out`.
  void initial_symbols(std::string_view piece, std::vector<TokenId>& out) const;

  BpeOptions options_;
  std::unique_ptr<VocabTable> vocab_;
  std::vector<TokenId> byte_ids_;  // byte-level: id of each single byte (-1 when missing)
  std::vector<TokenId> fallback_;  // byte_fallback: id of "<0xXX>" (-1 when missing)
  std::unique_ptr<MergeTable> merges_;
  uint64_t serial_;  // keys this model's per-thread cache
};

}  // namespace servebench::tokenizer::detail
