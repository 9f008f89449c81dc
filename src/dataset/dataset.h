// File: dataset/dataset.h
// Where prompts come from. A dataset yields Prompts: the text to send and how many tokens it
// is (counted with the run's tokenizer), plus the output length to ask for. Order and content
// are a pure function of the options and the seed. It does not send anything, know about
// schedules, or read files (the `random` dataset is synthetic).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servebench::tokenizer {
class Tokenizer;
}

namespace servebench::dataset {

struct Prompt {
  std::string text;           // prompt (completions) or the user message (chat)
  int32_t prompt_tokens = 0;  // tokens of text, by the run's tokenizer
  int32_t output_tokens = 0;  // max_tokens to request
};

// vLLM's `random` dataset: lengths uniform in [len*(1-r), len*(1+r)], a shared random prefix of
// prefix_len tokens, then tokens at consecutive vocabulary ids from a random offset, decoded to
// text and re-encoded so the prompt is exactly its target length.
struct RandomOptions {
  int32_t input_len = 1024;
  int32_t output_len = 128;
  double range_ratio = 0.0;
  int32_t prefix_len = 0;
  uint64_t seed = 0;
};

// What generation had to give up on, as vLLM warns about it.
struct RandomReport {
  // Sum over prompts of (final tokens - target tokens) when decode/re-encode did not converge
  // within vLLM's 10 retries; 0 with the built-in word tokenizer.
  int64_t token_mismatch = 0;
  int32_t prefix_token_mismatch = 0;  // the same for the shared prefix
  // The integer ranges lengths were drawn from (vLLM logs them).
  int32_t input_low = 0, input_high = 0, output_low = 0, output_high = 0;
};

// Exact rules (vLLM's RandomDataset.sample, datasets.py):
//   input  ~ U{floor(input_len*(1-r)), ceil(input_len*(1+r))} (+ prefix_len)
//   output ~ U{max(1, floor(output_len*(1-r))), max(1, ceil(output_len*(1+r)))}
//   ids    = prefix + (offset + index + arange(input)) % vocab, offset ~ U{0, vocab-1}
// then decode → encode, truncating or padding with random ids, at most 10 times.
// Random draws come from std::mt19937_64(seed) (not numpy's PCG64): the same seed gives
// byte-identical prompts here, not the same prompts as vLLM.
// Throws core::Error (usage, naming the --random-* flag) on r outside [0, 1), negative lengths,
// an output_len < 1, or a minimum prompt of 0 tokens.
std::vector<Prompt> random_prompts(size_t count, const RandomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer,
                                   RandomReport* report = nullptr);

}  // namespace servebench::dataset
