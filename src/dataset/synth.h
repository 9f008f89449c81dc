// File: dataset/synth.h (internal to the dataset part)
// What the synthetic datasets share: a portable seeded integer draw, and vLLM's
// gen_prompt_decode_to_target_len (decode ids, re-encode, truncate or pad, at most 10 times).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace servebench::dataset {

// Uniform integers from std::mt19937_64 by Lemire's multiply-and-reject, so the sequence is the
// same with every standard library (std::uniform_int_distribution is not).
class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}
  uint64_t below(uint64_t n);  // [0, n); 0 when n <= 1
  // Inclusive [low, high].
  int64_t between(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(below(static_cast<uint64_t>(high - low) + 1));
  }
  // `count` ids uniform over the tokenizer's vocabulary, appended to `ids`.
  void append_ids(std::vector<tokenizer::TokenId>& ids, size_t count, int32_t vocab);

 private:
  std::mt19937_64 engine_;
};

struct Converged {
  std::string text;
  size_t tokens = 0;                    // count(text)
  std::vector<tokenizer::TokenId> ids;  // encode(text), when asked for (else empty)
  int64_t mismatch = 0;                 // final - target when the retry budget ran out, else 0
  // Padding declined: `ids` holds the re-encoded ids it would have padded and `retries_left`
  // the adjustments left; resume_after_padding goes on from there.
  bool stopped_for_padding = false;
  int retries_left = 0;
};

// Appends `count` random ids to `ids` and returns true, or returns false to stop before
// padding: a caller settling prompts in parallel settles such a prompt again later, when it can
// make the draws in vLLM's order.
using Padding = std::function<bool(std::vector<tokenizer::TokenId>& ids, size_t count)>;

// Decodes ids and re-encodes the text until it is exactly `target` tokens: longer sequences
// are truncated, shorter ones padded by `pad`. After vLLM's 10 adjustments the remaining
// difference is reported in `mismatch` (vLLM's gen_prompt_decode_to_target_len). Without
// `want_ids` the text is first only counted (much cheaper than encoding), and encoded only when
// it must be adjusted.
Converged decode_to_target_len(const tokenizer::Tokenizer& tok, std::vector<tokenizer::TokenId> ids,
                               size_t target, const Padding& pad, bool want_ids);
// Goes on with a settling that stopped for padding: pads its ids with `pad` and settles them
// with the adjustments it had left, as if it had never stopped.
Converged resume_after_padding(const tokenizer::Tokenizer& tok, Converged stopped, size_t target,
                               const Padding& pad, bool want_ids);
// The same, padding with ids uniform over the vocabulary from `draw`.
Converged decode_to_target_len(const tokenizer::Tokenizer& tok, std::vector<tokenizer::TokenId> ids,
                               size_t target, Draw& draw, bool want_ids);

// A seed for one derived stream (e.g. one Mooncake block) from the run's seed and a key.
uint64_t mix_seed(uint64_t seed, uint64_t key);

// Calls work(first, last) over [0, count) split into contiguous ranges, one per hardware
// thread (fewer for small counts), and waits; the first exception is rethrown. `work` must
// only touch the items of its range.
void run_in_parallel(size_t count, const std::function<void(size_t, size_t)>& work);
// At most this many threads in run_in_parallel; 0 (the default) = one per hardware thread.
// Tests change it to check that prompts do not depend on the thread count.
void set_parallel_threads(size_t threads);

}  // namespace servebench::dataset
