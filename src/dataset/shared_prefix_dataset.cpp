// Datasets whose prompts share prefixes, for prefix-cache benchmarks:
//   prefix_repetition        vLLM's PrefixRepetitionRandomDataset.sample
//   generated-shared-prefix  SGLang's sample_generated_shared_prefix_requests
// Token texts are random vocabulary ids settled to exact lengths as the `random` dataset does
// (decode → re-encode → truncate or pad); the drift left is reported.
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/numpy_random.h"
#include "dataset/dataset.h"
#include "dataset/py_random.h"
#include "dataset/sampling.h"
#include "dataset/synth.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

// Random ids settled to exactly `length` tokens (empty for 0).
Converged exact_tokens(const tokenizer::Tokenizer& tok, size_t length, Draw& draw, bool want_ids) {
  if (length == 0) return {};
  std::vector<TokenId> ids;
  ids.reserve(length);
  draw.append_ids(ids, length, tok.vocab_size());
  return decode_to_target_len(tok, std::move(ids), length, draw, want_ids);
}

template <typename T>
void shuffle_like_python(std::vector<T>& items, uint64_t seed) {
  PyRandom rng(seed);
  rng.shuffle(items);
}

}  // namespace

std::vector<Prompt> prefix_repetition_prompts(size_t count, const PrefixRepetitionOptions& options,
                                              const tokenizer::Tokenizer& tokenizer,
                                              DatasetReport* report) {
  check_range("--prefix-repetition-prefix-len", options.prefix_len, 0, 10'000'000);
  check_range("--prefix-repetition-suffix-len", options.suffix_len, 0, 10'000'000);
  check_range("--prefix-repetition-num-prefixes", options.num_prefixes, 1, 10'000'000);
  check_range("--prefix-repetition-output-len", options.output_len, 1, INT32_MAX);
  if (options.prefix_len + options.suffix_len < 1) {
    throw core::Error(core::ErrorKind::kUsage, "--prefix-repetition-suffix-len",
                      "prefix and suffix are both 0 tokens: prompts would be empty");
  }
  const size_t per_prefix = count / static_cast<size_t>(options.num_prefixes);
  if (per_prefix == 0) {
    throw core::Error(core::ErrorKind::kUsage, "--num-prompts",
                      "must be at least --prefix-repetition-num-prefixes (" +
                          std::to_string(options.num_prefixes) + "), got " + std::to_string(count));
  }
  // vLLM's PrefixRepetitionRandomDataset reseeds numpy's global generator and draws every id
  // with np.random.randint(0, vocab_size), padding too (gen_prompt_decode_to_target_len without
  // an rng), in this order: a prefix, then its suffixes, prefix by prefix.
  core::NumpyRandomState numpy(core::numpy_legacy_seed(options.seed, "prefix_repetition"));
  const int32_t vocab = tokenizer.vocab_size();
  const Padding from_numpy = [&](std::vector<TokenId>& ids, size_t n) {
    for (size_t k = 0; k < n; ++k) ids.push_back(static_cast<TokenId>(numpy.randint(0, vocab)));
    return true;
  };
  auto numpy_tokens = [&](size_t length) -> Converged {
    if (length == 0) return {};
    std::vector<TokenId> ids;
    ids.reserve(length);
    from_numpy(ids, length);
    return decode_to_target_len(tokenizer, std::move(ids), length, from_numpy, true);
  };
  DatasetReport local;
  std::vector<Prompt> prompts;
  prompts.reserve(per_prefix * static_cast<size_t>(options.num_prefixes));
  for (int32_t g = 0; g < options.num_prefixes; ++g) {
    Converged prefix = numpy_tokens(static_cast<size_t>(options.prefix_len));
    local.token_mismatch += prefix.mismatch;
    for (size_t i = 0; i < per_prefix; ++i) {
      Converged suffix = numpy_tokens(static_cast<size_t>(options.suffix_len));
      std::vector<TokenId> ids = prefix.ids;
      ids.insert(ids.end(), suffix.ids.begin(), suffix.ids.end());
      Prompt p;
      p.text = tokenizer.decode(ids);
      p.prompt_tokens = static_cast<int32_t>(tokenizer.count(p.text));
      // vLLM counts len(prefix + suffix); servebench counts the text it sends and reports any
      // difference from the target.
      local.token_mismatch += suffix.mismatch + p.prompt_tokens - static_cast<int64_t>(ids.size());
      p.output_tokens = options.output_len;
      prompts.push_back(std::move(p));
    }
  }
  local.numpy_global_words = numpy.words_drawn();
  if (prompts.size() < count) {
    local.notes.push_back("prefix_repetition makes --prefix-repetition-num-prefixes x floor(" +
                          std::to_string(count) + " / " + std::to_string(options.num_prefixes) +
                          ") = " + std::to_string(prompts.size()) + " prompts (vLLM's rule)");
  }
  if (options.shuffle) shuffle_like_python(prompts, options.seed);
  note_token_mismatch(local);
  if (report) *report = std::move(local);
  return prompts;
}

std::vector<Prompt> shared_prefix_prompts(const SharedPrefixOptions& options,
                                          const tokenizer::Tokenizer& tokenizer,
                                          DatasetReport* report) {
  check_range("--gsp-num-groups", options.num_groups, 1, 1'000'000);
  check_range("--gsp-prompts-per-group", options.prompts_per_group, 1, 1'000'000);
  check_range("--gsp-system-prompt-len", options.system_prompt_len, 0, 10'000'000);
  check_range("--gsp-question-len", options.question_len, 0, 10'000'000);
  check_range("--gsp-output-len", options.output_len, 1, INT32_MAX);
  const double ratio = options.range_ratio;
  if (!(ratio > 0 && ratio <= 1)) {
    throw core::Error(core::ErrorKind::kUsage, "--gsp-range-ratio",
                      "must be in (0, 1], got " + std::to_string(ratio));
  }
  const auto groups = static_cast<size_t>(options.num_groups);
  const auto per_group = static_cast<size_t>(options.prompts_per_group);
  Draw draw(options.seed);
  // SGLang's compute_random_lens: uniform in [max(int(len * ratio), 1), len]; 0 stays 0.
  auto lengths = [&](int32_t full, size_t n) {
    std::vector<size_t> out(n, 0);
    if (full <= 0) return out;
    const int64_t low = std::max<int64_t>(static_cast<int64_t>(full * ratio), 1);
    for (auto& v : out) v = static_cast<size_t>(draw.between(low, full));
    return out;
  };
  const std::vector<size_t> system_lens = lengths(options.system_prompt_len, groups);
  const std::vector<size_t> question_lens = lengths(options.question_len, groups * per_group);
  const std::vector<size_t> output_lens = lengths(options.output_len, groups * per_group);

  DatasetReport local;
  std::vector<Prompt> prompts;
  prompts.reserve(groups * per_group);
  for (size_t g = 0; g < groups; ++g) {
    Converged system = exact_tokens(tokenizer, system_lens[g], draw, false);
    local.token_mismatch += system.mismatch;
    for (size_t q = 0; q < per_group; ++q) {
      const size_t k = g * per_group + q;
      Converged question = exact_tokens(tokenizer, question_lens[k], draw, false);
      local.token_mismatch += question.mismatch;
      Prompt p;
      p.text = system.text + "\n\n" + question.text;  // SGLang's f"{system_prompt}\n\n{question}"
      p.prompt_tokens = static_cast<int32_t>(tokenizer.count(p.text));
      p.output_tokens = static_cast<int32_t>(output_lens[k]);
      prompts.push_back(std::move(p));
    }
  }
  if (options.shuffle) shuffle_like_python(prompts, options.seed);
  note_token_mismatch(local);
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset
