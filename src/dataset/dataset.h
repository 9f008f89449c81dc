// File: dataset/dataset.h
// Where prompts come from. A dataset yields Prompts: the text to send and how many tokens it
// is (counted with the run's tokenizer), plus the output length to ask for, and for traces the
// time the trace sent it. Order and content are a pure function of the options, the file and
// the seed. It reads its file (if any) and nothing else: it sends nothing and knows no
// schedule. Bad files throw core::Error (kInput) as "FILE:LINE (byte N): what is wrong".
// docs/datasets.md gives each dataset's rules and where they come from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace servebench::tokenizer {
class Tokenizer;
}

namespace servebench::dataset {

struct Prompt {
  std::string text;           // prompt (completions) or the user message (chat)
  int32_t prompt_tokens = 0;  // tokens of text, by the run's tokenizer
  int32_t output_tokens = 0;  // max_tokens to request
  // Trace datasets: when the trace sent it, in ns after the trace's first request (before any
  // time scale); -1 for every other dataset.
  int64_t trace_offset_ns = -1;
  // Multi-turn (sharegpt --multi-turn): which conversation this user turn belongs to (0, 1, …
  // in order) and its turn (0 = first); -1 / 0 for single prompts. A conversation's turns are
  // consecutive, in turn order.
  int64_t conversation = -1;
  int32_t turn = 0;
};

// How the token ids become text of exactly the drawn length (--random-token-rule):
//   kVllm: vLLM's rule: consecutive vocabulary ids, decode, re-encode, truncate or pad (at most
//          10 times; any remaining difference is reported);
//   kRoundTrip: servebench's: consecutive entries of the tokenizer's pool of whole-word tokens
//          (" word": a space and ASCII letters) that encode back to themselves in any order, so
//          the text is exact by construction and is never re-encoded.
enum class RandomTokenRule { kVllm, kRoundTrip };
// "vllm" / "round-trip"; parse gives false for anything else.
const char* token_rule_name(RandomTokenRule rule);
bool parse_token_rule(std::string_view name, RandomTokenRule* rule);

// vLLM's `random` dataset: lengths uniform in [len*(1-r), len*(1+r)], a shared random prefix of
// prefix_len tokens, then tokens at consecutive vocabulary ids from a random offset, decoded to
// text and re-encoded so the prompt is exactly its target length. Drawn as vLLM draws them, from
// np.random.default_rng(seed): the same seed, lengths and vocabulary give vLLM's token ids.
struct RandomOptions {
  int32_t input_len = 1024;
  int32_t output_len = 128;
  double range_ratio = 0.0;
  int32_t prefix_len = 0;
  uint64_t seed = 0;
  RandomTokenRule token_rule = RandomTokenRule::kVllm;
};

// What generation had to give up on, as vLLM warns about it.
struct RandomReport {
  // Sum over prompts of (final tokens - target tokens) when decode/re-encode did not converge
  // within vLLM's 10 retries; 0 with the built-in word tokenizer.
  int64_t token_mismatch = 0;
  // kRoundTrip: how many tokens the pool holds (ids are drawn from it); 0 with kVllm.
  int32_t token_pool_size = 0;
  // The integer ranges lengths were drawn from (vLLM logs them).
  int32_t input_low = 0, input_high = 0, output_low = 0, output_high = 0;
};

// Exact rules (vLLM's RandomDataset.sample, datasets.py):
//   input  ~ U{floor(input_len*(1-r)), ceil(input_len*(1+r))} (+ prefix_len)
//   output ~ U{max(1, floor(output_len*(1-r))), max(1, ceil(output_len*(1+r)))}
//   ids    = prefix + (offset + index + arange(input)) % vocab, offset ~ U{0, vocab-1}
// then decode → encode of the whole sequence, truncating or padding with random ids, at most
// 10 times. The draws are vLLM's, from np.random.default_rng(seed) (core::NumpyGenerator): all
// input lengths, all output lengths, all offsets, the prefix, then each prompt's padding in
// prompt order. vLLM leaves out the tokenizer's special ids (none below vocab_size with the
// built-in rule, Llama 3, Qwen) and subtracts the special tokens it adds from input_len;
// servebench's tokenizers expose neither (docs/run.md, "Seeds").
// With RandomTokenRule::kRoundTrip, offset ~ U{0, pool-1} and the ids are
// prefix + pool[(offset + index + arange(input)) % pool], the prefix drawn from the pool too
// (the same draws over pool positions); the text is exact without re-encoding (docs/run.md).
// Throws core::Error (usage, naming the --random-* flag) on r outside [0, 1), negative lengths,
// an output_len < 1, a minimum prompt of 0 tokens, or a tokenizer without a usable pool.
std::vector<Prompt> random_prompts(size_t count, const RandomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer,
                                   RandomReport* report = nullptr);

// ---- Datasets beyond `random`: vLLM's names, flags and defaults (SGLang's for
// generated-shared-prefix; Mooncake's and Azure's trace formats).

// What building prompts found and had to make up; the run prints `notes` as notices.
struct DatasetReport {
  size_t rows = 0;             // records in the file (0 for synthetic datasets)
  size_t usable = 0;           // records that passed the dataset's filters
  size_t oversampled = 0;      // prompts drawn again from the usable ones to reach the count
  int64_t token_mismatch = 0;  // as RandomReport: tokens - target where re-encoding drifted
  // 32-bit words drawn from numpy's global generator after np.random.seed(seed): vLLM's
  // prefix_repetition reseeds it and draws its ids from it, before the arrivals draw from it
  // (schedule::ArrivalOptions::numpy_words_before); 0 for every other dataset.
  uint64_t numpy_global_words = 0;
  std::vector<std::string> notes;  // one line each: skipped rows, fewer prompts than asked, ...
};

// How file datasets pick rows: vLLM's random.seed(seed) + random.shuffle of the usable rows,
// first N, then random.choice for any shortfall (--disable-shuffle, --no-oversample).
struct FileSampling {
  std::string path;
  uint64_t seed = 0;
  bool shuffle = true;
  bool oversample = true;
};

// --dataset-name sharegpt: JSON array of {"conversations": [{"value": ...}, ...]}; turn 0 is
// the prompt, turn 1's token count the output length (or output_len when >= 0); rows with < 2
// turns dropped before the shuffle; vLLM's is_valid_sequence filter after it.
// multi_turn (--multi-turn): each row becomes a conversation of user turns (positions 0, 2, 4,
// …), each with the following reply's token count as its output length; `count` is then the
// number of conversations. The first pair passes vLLM's filter as above; the conversation ends
// before the first later pair that does not, or after max_turns user turns (0 = no cap).
struct ShareGptOptions {
  FileSampling file;
  int32_t output_len = -1;  // --sharegpt-output-len; -1 = from the reply
  bool multi_turn = false;  // --multi-turn
  int32_t max_turns = 0;    // --max-turns; 0 = every turn of the row
};
// --dataset-name custom: JSONL of {"prompt": ..., "output_tokens": n (optional)}.
struct CustomOptions {
  FileSampling file;
  int32_t output_len = 256;  // --custom-output-len; -1 = each row's output_tokens
};
// --dataset-name sonnet: vLLM's fixed instruction + the file's first lines as a shared prefix +
// lines drawn with replacement; path "" = servebench's built-in generated verses.
struct SonnetOptions {
  std::string path;
  int32_t input_len = 550, output_len = 150, prefix_len = 200;
  uint64_t seed = 0;
};
// --dataset-name prefix_repetition: num_prefixes random prefixes, count / num_prefixes
// prompts each (prefix + random suffix), shuffled. The ids are vLLM's: np.random.seed(seed),
// then np.random.randint over the vocabulary (core::NumpyRandomState), the prefix before its
// suffixes, padding from the same stream; the seed must be below 2^32, as numpy's.
struct PrefixRepetitionOptions {
  int32_t prefix_len = 256, suffix_len = 256, num_prefixes = 10, output_len = 128;
  uint64_t seed = 0;
  bool shuffle = true;
};
// --dataset-name generated-shared-prefix (SGLang): num_groups system prompts, prompts_per_group
// questions each; prompt = system + "\n\n" + question; groups x prompts_per_group prompts.
struct SharedPrefixOptions {
  int32_t num_groups = 64, prompts_per_group = 16, system_prompt_len = 2048, question_len = 128,
          output_len = 256;
  double range_ratio = 1.0;  // lengths uniform in [max(int(len * ratio), 1), len]; 1 = exact
  uint64_t seed = 0;
  bool shuffle = true;
};
// Traces replayed at their timestamps. kJsonl: Mooncake-style lines {timestamp, input_length,
// output_length, hash_ids}; each hash id is one block of block_tokens tokens whose text depends
// only on (seed, id), so equal ids share text. kAzureCsv: TIMESTAMP,ContextTokens,
// GeneratedTokens. Rows are taken in timestamp order, the first `count` of them.
struct TraceOptions {
  enum class Format { kJsonl, kAzureCsv } format = Format::kJsonl;
  std::string path;
  int32_t block_tokens = 512;      // Mooncake's block; vLLM's timed_trace defaults to 16
  double seconds_per_unit = 1e-3;  // Mooncake's timestamps are ms; vLLM's timed_trace: 1
  std::string timestamp_field = "timestamp", input_field = "input_length",
              output_field = "output_length", hash_ids_field = "hash_ids";
  uint64_t seed = 0;
};

std::vector<Prompt> sharegpt_prompts(size_t count, const ShareGptOptions& options,
                                     const tokenizer::Tokenizer& tokenizer, DatasetReport* report);
std::vector<Prompt> custom_prompts(size_t count, const CustomOptions& options,
                                   const tokenizer::Tokenizer& tokenizer, DatasetReport* report);
std::vector<Prompt> sonnet_prompts(size_t count, const SonnetOptions& options,
                                   const tokenizer::Tokenizer& tokenizer, DatasetReport* report);
std::vector<Prompt> prefix_repetition_prompts(size_t count, const PrefixRepetitionOptions& options,
                                              const tokenizer::Tokenizer& tokenizer,
                                              DatasetReport* report);
// Always num_groups x prompts_per_group prompts (SGLang ignores --num-prompts here).
std::vector<Prompt> shared_prefix_prompts(const SharedPrefixOptions& options,
                                          const tokenizer::Tokenizer& tokenizer,
                                          DatasetReport* report);
std::vector<Prompt> trace_prompts(size_t count, const TraceOptions& options,
                                  const tokenizer::Tokenizer& tokenizer, DatasetReport* report);
// servebench's sonnet-style text: `lines` verse lines made from a fixed word list and a seed.
std::string generated_verses(size_t lines, uint64_t seed);

// Every dataset behind one name (--dataset-name).
struct DatasetOptions {
  std::string name = "random";
  RandomOptions random;
  ShareGptOptions sharegpt;
  CustomOptions custom;
  SonnetOptions sonnet;
  PrefixRepetitionOptions prefix_repetition;
  SharedPrefixOptions shared_prefix;
  TraceOptions trace;
};
// The names make_prompts knows, and whether one is a trace (replayed at its timestamps).
const std::vector<std::string>& dataset_names();
bool is_trace_dataset(const std::string& name);
std::vector<Prompt> make_prompts(size_t count, const DatasetOptions& options,
                                 const tokenizer::Tokenizer& tokenizer, DatasetReport* report);

}  // namespace servebench::dataset
