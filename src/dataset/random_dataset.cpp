// vLLM's `random` dataset (vllm/benchmarks/datasets: RandomDataset.sample,
// gen_prompt_decode_to_target_len), re-implemented for servebench's tokenizer interface, with
// its draws from np.random.default_rng(seed) (core::NumpyGenerator) in vLLM's order.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/numpy_random.h"
#include "dataset/dataset.h"
#include "dataset/synth.h"
#include "dataset/token_pool.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

[[noreturn]] void bad(const char* flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

// The round-trip rule: pool entries instead of vocabulary ids. A prompt's tokens after the
// shared prefix are consecutive pool entries, so its text is the prefix's text and one run of
// the pool's texts, copied without decoding or encoding anything.
void fill_round_trip(std::vector<Prompt>& prompts, const RoundTripPool& pool,
                     const std::vector<uint32_t>& prefix, const std::vector<int32_t>& input_lens,
                     const std::vector<int32_t>& output_lens, const std::vector<int64_t>& offsets) {
  const std::string prefix_text = pool.text(prefix);
  const bool at_start = prefix.empty();
  run_in_parallel(prompts.size(), [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      const auto start = static_cast<size_t>(offsets[i]) + i;
      const auto length = static_cast<size_t>(input_lens[i]);
      std::string& text = prompts[i].text;
      text.reserve(prefix_text.size() + pool.run_bytes(start, length, at_start));
      text = prefix_text;
      pool.append_run(text, start, length, at_start);
      prompts[i].prompt_tokens = static_cast<int32_t>(prefix.size() + length);
      prompts[i].output_tokens = output_lens[i];
    }
  });
}

}  // namespace

const char* token_rule_name(RandomTokenRule rule) {
  return rule == RandomTokenRule::kRoundTrip ? "round-trip" : "vllm";
}

bool parse_token_rule(std::string_view name, RandomTokenRule* rule) {
  if (name == "vllm") {
    *rule = RandomTokenRule::kVllm;
  } else if (name == "round-trip") {
    *rule = RandomTokenRule::kRoundTrip;
  } else {
    return false;
  }
  return true;
}

std::vector<Prompt> random_prompts(size_t count, const RandomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer, RandomReport* report) {
  const double r = options.range_ratio;
  if (!(r >= 0.0 && r < 1.0)) {
    bad("--random-range-ratio", "must be in [0, 1), got " + std::to_string(r));
  }
  if (options.input_len < 0) {
    bad("--random-input-len", "must be >= 0, got " + std::to_string(options.input_len));
  }
  if (options.prefix_len < 0) {
    bad("--random-prefix-len", "must be >= 0, got " + std::to_string(options.prefix_len));
  }
  if (options.output_len < 1) {
    bad("--random-output-len", "must be >= 1, got " + std::to_string(options.output_len));
  }
  const int32_t vocab = tokenizer.vocab_size();
  if (vocab <= 0) {
    throw core::Error(core::ErrorKind::kInternal, "random dataset",
                      "tokenizer " + tokenizer.name() + " has an empty vocabulary");
  }

  // Bounds exactly as vLLM computes them: floor for the low end, ceil for the high end, in
  // double arithmetic. The built-in tokenizer adds no special tokens, so nothing is subtracted.
  const double in = options.input_len, outl = options.output_len;
  const auto input_low = static_cast<int64_t>(std::floor(in * (1 - r)));
  const auto input_high = static_cast<int64_t>(std::ceil(in * (1 + r)));
  const int64_t output_low = std::max<int64_t>(static_cast<int64_t>(std::floor(outl * (1 - r))), 1);
  const int64_t output_high = std::max<int64_t>(static_cast<int64_t>(std::ceil(outl * (1 + r))), 1);
  if (options.prefix_len + input_low < 1) {
    bad("--random-input-len",
        "too small: the shortest possible prompt (--random-prefix-len " +
            std::to_string(options.prefix_len) + " + floor(" + std::to_string(options.input_len) +
            " * (1 - " + std::to_string(r) + "))) is 0 tokens; raise --random-input-len or " +
            "--random-prefix-len, or lower --random-range-ratio");
  }
  if (input_high + options.prefix_len > INT32_MAX / 2 || output_high > INT32_MAX / 2) {
    bad("--random-input-len", "lengths this large are not supported");
  }

  RandomReport local;
  local.input_low = static_cast<int32_t>(input_low);
  local.input_high = static_cast<int32_t>(input_high);
  local.output_low = static_cast<int32_t>(output_low);
  local.output_high = static_cast<int32_t>(output_high);

  const bool round_trip = options.token_rule == RandomTokenRule::kRoundTrip;
  std::unique_ptr<RoundTripPool> pool;
  if (round_trip) {
    pool = std::make_unique<RoundTripPool>(tokenizer);
    local.token_pool_size = static_cast<int32_t>(pool->size());
  }
  // Ids (kVllm) or pool positions (kRoundTrip) are drawn below this.
  const uint64_t span = round_trip ? pool->size() : static_cast<uint64_t>(vocab);

  // vLLM's RandomDataset: self._rng = np.random.default_rng(seed), drawn in this order: all input
  // lengths, all output lengths, all offsets, the prefix, then each prompt's padding in turn.
  core::NumpyGenerator numpy(options.seed);
  std::vector<int32_t> input_lens(count), output_lens(count);
  std::vector<int64_t> offsets(count);
  for (auto& v : input_lens) v = static_cast<int32_t>(numpy.integers(input_low, input_high + 1));
  for (auto& v : output_lens) v = static_cast<int32_t>(numpy.integers(output_low, output_high + 1));
  for (auto& v : offsets) v = numpy.integers(0, static_cast<int64_t>(span));
  std::vector<TokenId> prefix(static_cast<size_t>(options.prefix_len));
  for (auto& v : prefix) v = static_cast<TokenId>(numpy.integers(0, static_cast<int64_t>(span)));

  if (round_trip) {
    const std::vector<uint32_t> positions(prefix.begin(), prefix.end());
    std::vector<Prompt> prompts(count);
    fill_round_trip(prompts, *pool, positions, input_lens, output_lens, offsets);
    if (report) *report = local;
    return prompts;
  }

  // Prompt i: prefix + (offset_i + i + arange(input_len_i)) % vocab, settled by decode and
  // re-encode as one sequence (vLLM does not settle the prefix alone).
  const size_t prefix_size = prefix.size();
  auto initial_ids = [&](size_t i) {
    std::vector<TokenId> ids;
    ids.reserve(prefix_size + static_cast<size_t>(input_lens[i]));
    ids.assign(prefix.begin(), prefix.end());
    const int64_t start = offsets[i] + static_cast<int64_t>(i);
    for (int32_t j = 0; j < input_lens[i]; ++j)
      ids.push_back(static_cast<TokenId>((start + j) % vocab));
    return ids;
  };
  std::vector<Prompt> prompts(count);
  std::vector<int64_t> mismatch(count, 0);
  auto keep = [&](size_t i, Converged& c) {
    mismatch[i] = c.mismatch;
    prompts[i].prompt_tokens = static_cast<int32_t>(c.tokens);
    prompts[i].output_tokens = output_lens[i];
    prompts[i].text = std::move(c.text);
  };
  auto target_of = [&](size_t i) { return prefix_size + static_cast<size_t>(input_lens[i]); };
  // Once lengths and offsets are drawn, prompts are independent until one needs padding, whose
  // ids vLLM draws from the same generator in prompt order: settle a block of prompts on every
  // core, stopping a prompt where it would pad; then go on with those in order, padding from
  // the generator. Blocks bound the ids kept for the stopped prompts.
  constexpr size_t kBlock = 8192;
  const Padding not_now = [](std::vector<TokenId>&, size_t) { return false; };
  const Padding from_numpy = [&](std::vector<TokenId>& ids, size_t n) {
    // gen_prompt_decode_to_target_len: rng.integers(0, tokenizer.vocab_size, size=n).
    for (size_t k = 0; k < n; ++k) ids.push_back(static_cast<TokenId>(numpy.integers(0, vocab)));
    return true;
  };
  std::vector<Converged> stopped;
  for (size_t block = 0; block < count; block += kBlock) {
    const size_t size = std::min(kBlock, count - block);
    stopped.assign(size, Converged{});
    run_in_parallel(size, [&](size_t first, size_t last) {
      // Minutes for large sets with a real tokenizer: SIGINT/SIGTERM end it (core/interrupt.h).
      for (size_t k = first; k < last && !core::interrupted(); ++k) {
        const size_t i = block + k;
        Converged c = decode_to_target_len(tokenizer, initial_ids(i), target_of(i), not_now, false);
        if (c.stopped_for_padding) {
          stopped[k] = std::move(c);
        } else {
          keep(i, c);
        }
      }
    });
    core::throw_if_interrupted("building the prompts");
    for (size_t k = 0; k < size; ++k) {
      if (!stopped[k].stopped_for_padding) continue;
      core::throw_if_interrupted("building the prompts");
      const size_t i = block + k;
      Converged c =
          resume_after_padding(tokenizer, std::move(stopped[k]), target_of(i), from_numpy, false);
      keep(i, c);
    }
  }
  for (int64_t m : mismatch) local.token_mismatch += m;
  if (report) *report = local;
  return prompts;
}

}  // namespace servebench::dataset
