#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "dataset/dataset.h"
#include "dataset/synth.h"
#include "dataset/test_support.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

using test_support::CharTokenizer;

TEST(RandomDataset, LengthsInRangeAndTokenCountsExact) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 100;
  o.output_len = 50;
  o.range_ratio = 0.5;
  o.seed = 7;
  RandomReport report;
  auto prompts = random_prompts(300, o, *tok, &report);
  ASSERT_EQ(prompts.size(), 300u);
  EXPECT_EQ(report.input_low, 50);
  EXPECT_EQ(report.input_high, 150);
  EXPECT_EQ(report.output_low, 25);
  EXPECT_EQ(report.output_high, 75);
  EXPECT_EQ(report.token_mismatch, 0);
  std::set<int32_t> distinct_inputs;
  for (const auto& p : prompts) {
    EXPECT_GE(p.prompt_tokens, 50);
    EXPECT_LE(p.prompt_tokens, 150);
    EXPECT_GE(p.output_tokens, 25);
    EXPECT_LE(p.output_tokens, 75);
    EXPECT_EQ(tok->count(p.text), static_cast<size_t>(p.prompt_tokens));
    distinct_inputs.insert(p.prompt_tokens);
  }
  // 300 draws over 101 values: a uniform draw covers most of them.
  EXPECT_GT(distinct_inputs.size(), 80u);
}

TEST(RandomDataset, BoundsUseFloorAndCeilAndOutputAtLeastOne) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 10;
  o.output_len = 1;
  o.range_ratio = 0.25;  // 7.5 → 7, 12.5 → 13; output 0.75 → max(0, 1) = 1, 1.25 → 2
  RandomReport report;
  auto prompts = random_prompts(200, o, *tok, &report);
  EXPECT_EQ(report.input_low, 7);
  EXPECT_EQ(report.input_high, 13);
  EXPECT_EQ(report.output_low, 1);
  EXPECT_EQ(report.output_high, 2);
  std::set<int32_t> ins, outs;
  for (const auto& p : prompts) {
    ins.insert(p.prompt_tokens);
    outs.insert(p.output_tokens);
  }
  EXPECT_EQ(ins, (std::set<int32_t>{7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(outs, (std::set<int32_t>{1, 2}));
}

TEST(RandomDataset, RangeRatioZeroGivesExactLengths) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 32;
  o.output_len = 16;
  o.prefix_len = 5;
  auto prompts = random_prompts(50, o, *tok);
  ASSERT_EQ(prompts.size(), 50u);
  for (const auto& p : prompts) {
    EXPECT_EQ(p.prompt_tokens, 37);
    EXPECT_EQ(p.output_tokens, 16);
    EXPECT_EQ(tok->count(p.text), 37u);
  }
}

TEST(RandomDataset, TokensAreConsecutiveIdsFromAnOffset) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 64;
  o.output_len = 4;
  auto prompts = random_prompts(20, o, *tok);
  std::set<TokenId> first_ids;
  for (const auto& p : prompts) {
    auto ids = tok->encode(p.text);
    ASSERT_EQ(ids.size(), 64u);
    for (size_t j = 1; j < ids.size(); ++j) {
      EXPECT_EQ(ids[j], (ids[j - 1] + 1) % tok->vocab_size()) << "at " << j;
    }
    first_ids.insert(ids[0]);
  }
  EXPECT_GT(first_ids.size(), 15u);  // a random offset per request
}

TEST(RandomDataset, PrefixIsSharedByAllPrompts) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 20;
  o.output_len = 8;
  o.prefix_len = 16;
  o.range_ratio = 0.5;
  o.seed = 3;
  auto prompts = random_prompts(40, o, *tok);
  auto first = tok->encode(prompts[0].text);
  std::vector<TokenId> prefix(first.begin(), first.begin() + 16);
  std::string prefix_text = tok->decode(prefix);
  std::set<std::string> suffixes;
  for (const auto& p : prompts) {
    EXPECT_EQ(p.text.compare(0, prefix_text.size(), prefix_text), 0);
    EXPECT_GE(p.prompt_tokens, 16 + 10);
    EXPECT_LE(p.prompt_tokens, 16 + 30);
    suffixes.insert(p.text.substr(prefix_text.size()));
  }
  EXPECT_EQ(suffixes.size(), prompts.size());  // only the prefix is shared
}

TEST(RandomDataset, SameSeedGivesByteIdenticalPrompts) {
  auto tok = tokenizer::make_word_tokenizer();
  RandomOptions o;
  o.input_len = 128;
  o.output_len = 32;
  o.range_ratio = 0.3;
  o.prefix_len = 8;
  o.seed = 42;
  auto a = random_prompts(100, o, *tok);
  auto b = random_prompts(100, o, *tok);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text, b[i].text);
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens);
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens);
  }
  o.seed = 43;
  auto c = random_prompts(100, o, *tok);
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i].text == c[i].text;
  EXPECT_EQ(same, 0u);
}

TEST(RandomDataset, ZeroCountGivesNoPrompts) {
  auto tok = tokenizer::make_word_tokenizer();
  EXPECT_TRUE(random_prompts(0, RandomOptions{}, *tok).empty());
}

TEST(RandomDataset, ReEncodingIsTruncatedOrPaddedToTheTarget) {
  // Vocabulary of 30: ids 20..25 decode to two letters, 26..29 to nothing, so most raw
  // sequences re-encode to a different length and must be adjusted. Of 40 ids, 14 decode to
  // nothing, so 40 consecutive ids and 6 prefix ids decode to at most 44 letters: every prompt
  // is padded.
  for (const int32_t vocab : {30, 40}) {
    CharTokenizer tok(vocab, false);
    RandomOptions o;
    o.input_len = 40;
    o.output_len = 4;
    o.prefix_len = 6;
    o.seed = 11;
    RandomReport report;
    set_parallel_threads(2);
    auto prompts = random_prompts(600, o, tok, &report);
    EXPECT_EQ(report.token_mismatch, 0);
    for (const auto& p : prompts) {
      EXPECT_EQ(p.prompt_tokens, 46);
      EXPECT_EQ(tok.encode(p.text).size(), 46u);
    }
    // Padding ids come from the one generator in prompt order (as vLLM draws them), however many
    // threads settle the prompts: 600 prompts split over 2 threads, then all on 1.
    set_parallel_threads(1);
    const auto one_thread = random_prompts(600, o, tok);
    set_parallel_threads(0);
    for (size_t i = 0; i < prompts.size(); ++i)
      EXPECT_EQ(prompts[i].text, one_thread[i].text) << "vocab " << vocab << ", prompt " << i;
  }
}

TEST(RandomDataset, MismatchIsReportedWhenReEncodingNeverConverges) {
  CharTokenizer tok(20, /*extra_token=*/true);
  RandomOptions o;
  o.input_len = 10;
  o.output_len = 4;
  RandomReport report;
  auto prompts = random_prompts(7, o, tok, &report);
  EXPECT_EQ(report.token_mismatch, 7);  // one token too many, for each of 7 prompts
  for (const auto& p : prompts) {
    // The count is what the tokenizer says of the final text, never the target.
    EXPECT_EQ(static_cast<size_t>(p.prompt_tokens), tok.encode(p.text).size());
    EXPECT_EQ(p.prompt_tokens, 11);
  }
}

void expect_usage_error(const RandomOptions& o, const std::string& flag) {
  auto tok = tokenizer::make_word_tokenizer();
  try {
    random_prompts(3, o, *tok);
    ADD_FAILURE() << "no error for " << flag;
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_EQ(e.where(), flag);
  }
}

TEST(RandomDataset, BadOptionsAreUsageErrorsNamingTheFlag) {
  RandomOptions o;
  o.range_ratio = 1.0;
  expect_usage_error(o, "--random-range-ratio");
  o.range_ratio = -0.1;
  expect_usage_error(o, "--random-range-ratio");
  o.range_ratio = std::numeric_limits<double>::quiet_NaN();
  expect_usage_error(o, "--random-range-ratio");
  o = RandomOptions{};
  o.input_len = -1;
  expect_usage_error(o, "--random-input-len");
  o = RandomOptions{};
  o.output_len = 0;
  expect_usage_error(o, "--random-output-len");
  o = RandomOptions{};
  o.prefix_len = -2;
  expect_usage_error(o, "--random-prefix-len");
  o = RandomOptions{};
  o.input_len = 0;  // shortest prompt 0 tokens
  expect_usage_error(o, "--random-input-len");
  o.input_len = 1;
  o.range_ratio = 0.5;  // floor(0.5) = 0
  expect_usage_error(o, "--random-input-len");
  o.prefix_len = 1;  // now at least one token: fine
  auto tok = tokenizer::make_word_tokenizer();
  EXPECT_EQ(random_prompts(3, o, *tok).size(), 3u);
}

}  // namespace
}  // namespace servebench::dataset
