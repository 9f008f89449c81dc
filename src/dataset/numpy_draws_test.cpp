// The seeded datasets draw vLLM's token ids: the expectations are
// tests/testdata/numpy_expectations.txt, written by scripts/gen-numpy-expectations.py with
// Debian's python3-numpy mirroring vLLM's RandomDataset and PrefixRepetitionRandomDataset draws.
// The built-in word rule decodes every id to a word that encodes back to it, so the ids of a
// prompt's text are exactly the ids drawn.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/numpy_random.h"
#include "dataset/dataset.h"
#include "dataset/test_support.h"
#include "schedule/schedule.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

struct TextCase {
  std::vector<std::string> args;
  std::vector<std::string> values;
};
struct Case {
  std::vector<std::string> args;
  std::vector<int64_t> values;
};

std::vector<TextCase> text_cases_named(const std::string& name) {
  std::ifstream in(SERVEBENCH_SOURCE_DIR "/tests/testdata/numpy_expectations.txt");
  std::vector<TextCase> cases;
  std::string line, word;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    if (!(words >> word) || word != name) continue;
    TextCase c;
    while (words >> word && word != "|") c.args.push_back(word);
    while (words >> word) c.values.push_back(word);
    cases.push_back(std::move(c));
  }
  EXPECT_FALSE(cases.empty()) << "no " << name << " case in tests/testdata/numpy_expectations.txt";
  return cases;
}

std::vector<Case> cases_named(const std::string& name) {
  std::vector<Case> cases;
  for (const TextCase& t : text_cases_named(name)) {
    Case c{t.args, {}};
    for (const std::string& v : t.values) c.values.push_back(std::stoll(v));
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<std::string> texts_of(const std::vector<Prompt>& prompts) {
  std::vector<std::string> texts;
  for (const Prompt& p : prompts) texts.push_back(p.text);
  return texts;
}

std::vector<Prompt> random_case_prompts(const std::vector<std::string>& args,
                                        const tokenizer::Tokenizer& tok) {
  RandomOptions o;
  o.seed = std::stoull(args[0]);
  o.input_len = std::stoi(args[2]);
  o.output_len = std::stoi(args[3]);
  o.range_ratio = std::strtod(args[4].c_str(), nullptr);
  o.prefix_len = std::stoi(args[5]);
  return random_prompts(std::stoull(args[1]), o, tok);
}

// args: seed, prefix_len, suffix_len, num_prefixes, ... (gen-numpy-expectations.py's order).
PrefixRepetitionOptions prefix_repetition_case_options(const std::vector<std::string>& args) {
  PrefixRepetitionOptions o;
  o.seed = std::stoull(args[0]);
  o.prefix_len = std::stoi(args[1]);
  o.suffix_len = std::stoi(args[2]);
  o.num_prefixes = std::stoi(args[3]);
  o.shuffle = false;  // vLLM's shuffle (Python's random) comes after; the draw order is compared
  return o;
}

TEST(NumpyDraws, RandomPromptsAreVllmsTokenIdsForTheSameSeed) {
  auto tok = tokenizer::make_word_tokenizer();
  ASSERT_EQ(tok->vocab_size(), 32000);  // the vocabulary the script assumes
  for (const Case& c : cases_named("random_prompt")) {
    const std::vector<std::string> args(c.args.begin(), c.args.end() - 1);
    const size_t index = std::stoull(c.args.back());
    const std::vector<Prompt> prompts = random_case_prompts(args, *tok);
    ASSERT_LT(index, prompts.size());
    const std::vector<TokenId> ids = tok->encode(prompts[index].text);
    EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.end()), c.values)
        << "seed " << args[0] << " n " << args[1] << " prompt " << index;
    EXPECT_EQ(static_cast<size_t>(prompts[index].prompt_tokens), c.values.size());
  }
  for (const Case& c : cases_named("random_output_lens")) {
    const std::vector<Prompt> prompts = random_case_prompts(c.args, *tok);
    std::vector<int64_t> output_lens;
    for (const Prompt& p : prompts) output_lens.push_back(p.output_tokens);
    EXPECT_EQ(output_lens, c.values) << "seed " << c.args[0] << " n " << c.args[1];
  }
}

TEST(NumpyDraws, PrefixRepetitionPromptsAreVllmsTokenIdsAndSayHowFarTheStreamWent) {
  auto tok = tokenizer::make_word_tokenizer();
  for (const Case& c : cases_named("prefix_repetition_prompt")) {
    const PrefixRepetitionOptions o = prefix_repetition_case_options(c.args);
    const size_t per_prefix = std::stoull(c.args[4]);
    DatasetReport report;
    const std::vector<Prompt> prompts = prefix_repetition_prompts(
        per_prefix * static_cast<size_t>(o.num_prefixes), o, *tok, &report);
    const size_t index = std::stoull(c.args[5]);
    ASSERT_LT(index, prompts.size());
    const std::vector<TokenId> ids = tok->encode(prompts[index].text);
    EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.end()), c.values)
        << "seed " << o.seed << " prompt " << index;
    // Each id is one masked 32-bit draw, or more when the draw fell above the vocabulary.
    const size_t ids_drawn = static_cast<size_t>(o.num_prefixes) *
                             (static_cast<size_t>(o.prefix_len) + per_prefix * o.suffix_len);
    core::NumpyRandomState replay(static_cast<uint32_t>(o.seed));
    for (size_t k = 0; k < ids_drawn; ++k) replay.randint(0, tok->vocab_size());
    EXPECT_EQ(report.numpy_global_words, replay.words_drawn());
    EXPECT_GT(report.numpy_global_words, ids_drawn);  // 32000 is not a power of two
  }
}

TEST(NumpyDraws, RandomPromptsPadInVllmsOrder) {
  // The toy tokenizer pads every prompt, some more than once: the padding ids are drawn from
  // the generator in prompt order, after the prefix, as vLLM draws them. (That the thread count
  // does not matter: RandomDataset.ReEncodingIsTruncatedOrPaddedToTheTarget.)
  test_support::CharTokenizer tok(40, false);
  for (const TextCase& c : text_cases_named("random_toy_prompts")) {
    RandomOptions o;
    o.seed = std::stoull(c.args[0]);
    o.input_len = std::stoi(c.args[2]);
    o.output_len = 4;
    o.prefix_len = std::stoi(c.args[3]);
    EXPECT_EQ(texts_of(random_prompts(std::stoull(c.args[1]), o, tok)), c.values)
        << "seed " << o.seed;
  }
}

TEST(NumpyDraws, PrefixRepetitionPadsFromNumpysGlobalStreamAndTheArrivalsFollowIt) {
  test_support::CharTokenizer tok(40, false);
  for (const TextCase& c : text_cases_named("prefix_repetition_toy_prompts")) {
    const PrefixRepetitionOptions o = prefix_repetition_case_options(c.args);
    const size_t count = static_cast<size_t>(o.num_prefixes) * std::stoull(c.args[4]);
    DatasetReport report;
    EXPECT_EQ(texts_of(prefix_repetition_prompts(count, o, tok, &report)), c.values)
        << "seed " << o.seed;
    // vLLM's arrivals draw from the same global stream after the dataset's draws.
    for (const TextCase& a : text_cases_named("prefix_repetition_toy_arrivals")) {
      if (a.args[0] != c.args[0]) continue;
      schedule::ArrivalOptions arrivals{.request_rate = std::strtod(a.args[6].c_str(), nullptr),
                                        .burstiness = std::strtod(a.args[7].c_str(), nullptr),
                                        .seed = o.seed,
                                        .numpy_words_before = report.numpy_global_words};
      std::vector<int64_t> expected;
      for (const std::string& v : a.values)
        expected.push_back(std::llround(std::strtod(v.c_str(), nullptr) * 1e9));
      EXPECT_EQ(schedule::arrival_times_ns(std::stoull(a.args[5]), arrivals), expected)
          << "seed " << o.seed;
    }
  }
}

TEST(NumpyDraws, PrefixRepetitionRefusesASeedNumpyRefuses) {
  auto tok = tokenizer::make_word_tokenizer();
  PrefixRepetitionOptions o;
  o.seed = uint64_t{1} << 32;
  try {
    prefix_repetition_prompts(10, o, *tok, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.where(), "--seed");
  }
}

}  // namespace
}  // namespace servebench::dataset
