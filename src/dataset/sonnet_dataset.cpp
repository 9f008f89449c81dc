// vLLM's `sonnet` dataset (vllm/benchmarks/datasets: SonnetDataset.sample): a fixed
// instruction, the text's first lines as a prefix shared by every prompt, then lines drawn with
// replacement until the prompt has about input_len tokens; prompts over input_len are drawn
// again. vLLM reads benchmarks/sonnet.txt; servebench ships no poem but generates verse lines
// of its own (generated_verses) when no --dataset-path is given.
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/json_text.h"
#include "dataset/dataset.h"
#include "dataset/input_file.h"
#include "dataset/py_random.h"
#include "dataset/sampling.h"
#include "dataset/synth.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

// vLLM's instruction, word for word, so prompt lengths compare.
constexpr std::string_view kInstruction = "Pick as many lines as you can from these poem lines:\n";
// The built-in text: as many lines as vLLM's sonnet.txt has, always the same.
constexpr size_t kBuiltinLines = 518;

std::vector<std::string> split_lines(std::string_view text) {
  // Python's readlines(): each line keeps its "\n"; a last line without one is kept too.
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// vLLM reads the sonnet file as text: a binary file (a NUL byte, bytes that are not UTF-8) is
// refused at its first such byte rather than sent as prompts.
void check_text(const InputFile& file) {
  const std::string_view text = file.text();
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\0') file.fail(i, "not a text file: a NUL byte");
    const int len = core::utf8_char_at(text, i);
    if (len < 0) file.fail(i, "not a text file: bytes that are not UTF-8");
    i += static_cast<size_t>(len);
  }
}

// Python's round(): halves go to the even neighbour.
int64_t round_half_even(double v) {
  return static_cast<int64_t>(std::nearbyint(v));
}

}  // namespace

std::string generated_verses(size_t lines, uint64_t seed) {
  static constexpr std::string_view kWords[] = {
      "amber",   "river",   "quiet",   "lantern", "morning", "hollow", "silver",  "meadow",
      "ember",   "harbor",  "distant", "willow",  "thunder", "gentle", "salt",    "orchard",
      "winter",  "candle",  "wander",  "stone",   "bright",  "tide",   "feather", "crimson",
      "valley",  "whisper", "north",   "garden",  "patient", "cloud",  "iron",    "song",
      "falling", "green",   "shadow",  "open",    "ancient", "road",   "slow",    "harvest",
      "glass",   "wild",    "evening", "mirror",  "rain",    "golden", "field",   "echo"};
  static constexpr std::string_view kJoins[] = {"and", "of", "in", "the", "beneath", "with"};
  constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  constexpr size_t kJoinCount = sizeof(kJoins) / sizeof(kJoins[0]);
  Draw draw(seed);
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    const int64_t words = draw.between(6, 10);
    std::string line;
    for (int64_t w = 0; w < words; ++w) {
      if (w > 0) line += ' ';
      // Every third word (on average) is a joining word, so lines read like verse.
      std::string_view word = (w > 0 && draw.below(3) == 0) ? kJoins[draw.below(kJoinCount)]
                                                            : kWords[draw.below(kWordCount)];
      line += word;
    }
    line[0] = static_cast<char>(line[0] - 'a' + 'A');
    line += (i % 4 == 3) ? ".\n" : ",\n";
    text += line;
  }
  return text;
}

std::vector<Prompt> sonnet_prompts(size_t count, const SonnetOptions& options,
                                   const tokenizer::Tokenizer& tokenizer, DatasetReport* report) {
  check_range("--sonnet-output-len", options.output_len, 1, INT32_MAX);
  check_range("--sonnet-prefix-len", options.prefix_len, 0, INT32_MAX);
  DatasetReport local;
  std::vector<std::string> lines;
  std::string source = "the built-in verses";
  if (options.path.empty()) {
    lines = split_lines(generated_verses(kBuiltinLines, 0));
  } else {
    const InputFile file(options.path);
    check_text(file);
    lines = split_lines(file.text());
    source = options.path;
    if (lines.empty()) file.fail_file("the file is empty: the sonnet dataset needs lines of text");
  }
  local.rows = local.usable = lines.size();

  size_t total_tokens = 0;
  for (const auto& line : lines) total_tokens += tokenizer.count(line);
  const double avg_len = static_cast<double>(total_tokens) / static_cast<double>(lines.size());
  if (avg_len <= 0) {
    throw core::Error(core::ErrorKind::kInput, source, "the lines have no tokens");
  }
  // vLLM measures the instruction inside the chat template; servebench sends prompts without a
  // template, so the instruction alone is measured.
  const auto base_offset = static_cast<int64_t>(tokenizer.count(kInstruction));
  if (options.input_len <= base_offset) {
    throw core::Error(core::ErrorKind::kUsage, "--sonnet-input-len",
                      "must be more than the instruction's " + std::to_string(base_offset) +
                          " tokens, got " + std::to_string(options.input_len));
  }
  const int64_t input_lines = round_half_even((options.input_len - base_offset) / avg_len);
  const int64_t prefix_lines =
      std::max<int64_t>(round_half_even((options.prefix_len - base_offset) / avg_len), 0);
  std::string prefix(kInstruction);
  for (int64_t i = 0; i < prefix_lines && i < static_cast<int64_t>(lines.size()); ++i) {
    prefix += lines[static_cast<size_t>(i)];
  }
  const int64_t drawn_lines = std::max<int64_t>(input_lines - prefix_lines, 0);

  // random.choices(lines, k) with Python's generator, as vLLM draws them.
  PyRandom rng(options.seed);
  std::vector<Prompt> prompts;
  prompts.reserve(count);
  const size_t max_attempts = 1000 + 100 * count;
  for (size_t attempt = 0; prompts.size() < count; ++attempt) {
    if (attempt >= max_attempts) {
      throw core::Error(core::ErrorKind::kUsage, "--sonnet-input-len",
                        "after " + std::to_string(attempt) + " draws only " +
                            std::to_string(prompts.size()) + " prompts fit in " +
                            std::to_string(options.input_len) + " tokens (lines of " + source +
                            " average " + std::to_string(avg_len) + " tokens); raise it");
    }
    Prompt p;
    p.text = prefix;
    for (int64_t i = 0; i < drawn_lines; ++i) {
      p.text += lines[static_cast<size_t>(rng.random() * static_cast<double>(lines.size()))];
    }
    const auto tokens = static_cast<int64_t>(tokenizer.count(p.text));
    if (tokens > options.input_len) continue;
    p.prompt_tokens = static_cast<int32_t>(tokens);
    p.output_tokens = options.output_len;
    prompts.push_back(std::move(p));
  }
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset
