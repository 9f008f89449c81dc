// prefix_repetition (vLLM), generated-shared-prefix (SGLang), and make_prompts' dispatch.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.h"
#include "dataset/dataset.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;

class SharedPrefix : public ::testing::Test {
 protected:
  std::unique_ptr<tokenizer::Tokenizer> tok_ = tokenizer::make_word_tokenizer();
  // The first n tokens of text, as text (the word rule decodes ids back to the same words).
  std::string head(const std::string& text, size_t n) const {
    auto ids = tok_->encode(text);
    ids.resize(std::min(ids.size(), n));
    return tok_->decode(ids);
  }
};

TEST_F(SharedPrefix, PrefixRepetitionMakesWholeGroupsOfExactLength) {
  PrefixRepetitionOptions o;
  o.prefix_len = 32;
  o.suffix_len = 16;
  o.num_prefixes = 10;
  o.output_len = 7;
  o.seed = 4;
  DatasetReport report;
  auto prompts = prefix_repetition_prompts(25, o, *tok_, &report);
  // vLLM: num_prefixes x floor(25 / 10) = 20 prompts, and a note saying so.
  ASSERT_EQ(prompts.size(), 20u);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_NE(report.notes[0].find("= 20 prompts"), std::string::npos);
  EXPECT_EQ(report.token_mismatch, 0);
  std::map<std::string, int> per_prefix;
  std::set<std::string> suffixes;
  for (const auto& p : prompts) {
    EXPECT_EQ(p.prompt_tokens, 48);
    EXPECT_EQ(tok_->count(p.text), 48u);
    EXPECT_EQ(p.output_tokens, 7);
    ++per_prefix[head(p.text, 32)];
    suffixes.insert(p.text);
  }
  EXPECT_EQ(per_prefix.size(), 10u);
  for (const auto& [prefix, n] : per_prefix) EXPECT_EQ(n, 2) << prefix;
  EXPECT_EQ(suffixes.size(), 20u);
  // Shuffled: the two prompts of a group are not all side by side.
  int adjacent = 0;
  for (size_t i = 1; i < prompts.size(); ++i) {
    adjacent += head(prompts[i].text, 32) == head(prompts[i - 1].text, 32);
  }
  EXPECT_LT(adjacent, 10);
  auto again = prefix_repetition_prompts(25, o, *tok_, nullptr);
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(again[i].text, prompts[i].text);
}

TEST_F(SharedPrefix, PrefixRepetitionNeedsAPromptPerPrefix) {
  PrefixRepetitionOptions o;
  try {
    prefix_repetition_prompts(9, o, *tok_, nullptr);  // 10 prefixes by default
    ADD_FAILURE() << "no error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_EQ(e.where(), "--num-prompts");
  }
}

TEST_F(SharedPrefix, GeneratedSharedPrefixGroupsSystemPromptsAndQuestions) {
  SharedPrefixOptions o;
  o.num_groups = 4;
  o.prompts_per_group = 3;
  o.system_prompt_len = 40;
  o.question_len = 10;
  o.output_len = 5;
  o.seed = 9;
  auto prompts = shared_prefix_prompts(o, *tok_, nullptr);
  ASSERT_EQ(prompts.size(), 12u);
  std::map<std::string, int> groups;
  for (const auto& p : prompts) {
    // system (40 tokens) + "\n\n" (one whitespace token) + question (10 tokens)
    EXPECT_EQ(p.prompt_tokens, 51);
    EXPECT_EQ(tok_->count(p.text), 51u);
    EXPECT_EQ(p.output_tokens, 5);
    const size_t split = p.text.find("\n\n");
    ASSERT_NE(split, std::string::npos);
    EXPECT_EQ(tok_->count(std::string_view(p.text).substr(0, split)), 40u);
    ++groups[p.text.substr(0, split)];
  }
  EXPECT_EQ(groups.size(), 4u);
  for (const auto& [system, n] : groups) EXPECT_EQ(n, 3);

  // Unshuffled (--gsp-ordered), the groups come one after another.
  o.shuffle = false;
  auto ordered = shared_prefix_prompts(o, *tok_, nullptr);
  for (size_t i = 0; i < ordered.size(); ++i) {
    const std::string system = ordered[i].text.substr(0, ordered[i].text.find("\n\n"));
    const std::string first =
        ordered[i / 3 * 3].text.substr(0, ordered[i / 3 * 3].text.find("\n\n"));
    EXPECT_EQ(system, first) << i;
  }
}

TEST_F(SharedPrefix, GeneratedSharedPrefixRangeRatioDrawsLengthsBelowTheTarget) {
  SharedPrefixOptions o;
  o.num_groups = 2;
  o.prompts_per_group = 50;
  o.system_prompt_len = 20;
  o.question_len = 40;
  o.output_len = 30;
  o.range_ratio = 0.5;  // SGLang: uniform in [max(int(len * 0.5), 1), len]
  std::set<int32_t> outputs;
  for (const auto& p : shared_prefix_prompts(o, *tok_, nullptr)) {
    EXPECT_GE(p.output_tokens, 15);
    EXPECT_LE(p.output_tokens, 30);
    EXPECT_GE(p.prompt_tokens, 10 + 1 + 20);
    EXPECT_LE(p.prompt_tokens, 20 + 1 + 40);
    outputs.insert(p.output_tokens);
  }
  EXPECT_GT(outputs.size(), 8u);
}

TEST_F(SharedPrefix, MakePromptsDispatchesByName) {
  DatasetOptions o;
  o.name = "prefix_repetition";
  o.prefix_repetition.prefix_len = 8;
  o.prefix_repetition.suffix_len = 8;
  o.prefix_repetition.num_prefixes = 2;
  EXPECT_EQ(make_prompts(6, o, *tok_, nullptr).size(), 6u);
  o.name = "random";
  o.random.input_len = 12;
  auto random = make_prompts(3, o, *tok_, nullptr);
  ASSERT_EQ(random.size(), 3u);
  EXPECT_EQ(random[0].prompt_tokens, 12);
  o.name = "no-such-dataset";
  EXPECT_THROW(make_prompts(1, o, *tok_, nullptr), core::Error);
  EXPECT_TRUE(is_trace_dataset("mooncake"));
  EXPECT_TRUE(is_trace_dataset("azure_trace"));
  EXPECT_FALSE(is_trace_dataset("sharegpt"));
}

}  // namespace
}  // namespace servebench::dataset
