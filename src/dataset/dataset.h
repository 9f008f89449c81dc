// File: dataset/dataset.h
// Where prompts come from. A dataset yields Prompts: the text to send and how many tokens it
// is (counted with the run's tokenizer), plus the output length to ask for. Order and content
// are a pure function of the options and the seed.
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

std::vector<Prompt> random_prompts(size_t count, const RandomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer);

}  // namespace servebench::dataset
