// The random dataset's round-trip rule (--random-token-rule round-trip) with the four real
// tokenizer.json files of scripts/fetch-tokenizers.sh (build-deps/tokenizers, or
// $SERVEBENCH_TOKENIZER_DIR; a test is skipped when its file is absent): every prompt, encoded
// again by the full encoder, is exactly its count, in consecutive pool tokens.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "core/error.h"
#include "dataset/dataset.h"
#include "dataset/synth.h"
#include "dataset/token_pool.h"
#include "tokenizer/tokenizer.h"

namespace servebench::dataset {
namespace {

using tokenizer::TokenId;
namespace fs = std::filesystem;

fs::path tokenizer_file(const std::string& name) {
  const char* env = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  const fs::path dir =
      env && *env ? fs::path(env) : fs::path(SERVEBENCH_SOURCE_DIR) / "build-deps" / "tokenizers";
  return dir / name / "tokenizer.json";
}

// Loaded once per tokenizer for the whole binary (loading takes ~0.3 s).
const tokenizer::Tokenizer* real_tokenizer(const std::string& name) {
  static std::map<std::string, std::unique_ptr<tokenizer::Tokenizer>> loaded;
  auto it = loaded.find(name);
  if (it != loaded.end()) return it->second.get();
  const fs::path file = tokenizer_file(name);
  if (!fs::exists(file)) return nullptr;
  return loaded.emplace(name, tokenizer::load_tokenizer(file.string())).first->second.get();
}

RandomOptions round_trip_options(int32_t input_len, double range_ratio, int32_t prefix_len,
                                 uint64_t seed) {
  RandomOptions o;
  o.input_len = input_len;
  o.output_len = 32;
  o.range_ratio = range_ratio;
  o.prefix_len = prefix_len;
  o.seed = seed;
  o.token_rule = RandomTokenRule::kRoundTrip;
  return o;
}

class RoundTripRule : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    tok_ = real_tokenizer(GetParam());
    if (!tok_) GTEST_SKIP() << tokenizer_file(GetParam()) << " is absent";
  }
  void TearDown() override { set_parallel_threads(0); }
  const tokenizer::Tokenizer* tok_ = nullptr;
};

TEST_P(RoundTripRule, EveryPromptEncodesToExactlyItsCountInConsecutivePoolTokens) {
  const RoundTripPool pool(*tok_);
  ASSERT_GT(pool.size(), 1000u) << "a pool this small would make poor prompts";
  std::map<TokenId, size_t> position;
  for (size_t k = 0; k < pool.size(); ++k) position[pool.id(k)] = k;

  RandomReport report;
  auto prompts = random_prompts(120, round_trip_options(300, 0.5, 0, 11), *tok_, &report);
  ASSERT_EQ(prompts.size(), 120u);
  EXPECT_EQ(report.token_mismatch, 0);
  EXPECT_EQ(report.token_pool_size, static_cast<int32_t>(pool.size()));
  std::set<int32_t> lengths;
  for (const auto& p : prompts) {
    const std::vector<TokenId> ids = tok_->encode(p.text);
    ASSERT_EQ(ids.size(), static_cast<size_t>(p.prompt_tokens)) << GetParam() << ": " << p.text;
    EXPECT_GE(p.prompt_tokens, 150);
    EXPECT_LE(p.prompt_tokens, 450);
    EXPECT_EQ(tok_->count(p.text), ids.size());
    EXPECT_EQ(tok_->decode(ids), p.text);
    for (size_t j = 0; j < ids.size(); ++j) {
      auto at = position.find(ids[j]);
      ASSERT_NE(at, position.end()) << GetParam() << ": token " << ids[j] << " is not in the pool";
      if (j > 0) {
        EXPECT_EQ(at->second, (position[ids[j - 1]] + 1) % pool.size()) << "at " << j;
      }
    }
    lengths.insert(p.prompt_tokens);
  }
  EXPECT_GT(lengths.size(), 60u);  // lengths are drawn, not fixed
}

TEST_P(RoundTripRule, SameSeedGivesByteIdenticalPromptsOtherSeedsDiffer) {
  const auto o = round_trip_options(64, 0.2, 8, 5);
  auto a = random_prompts(40, o, *tok_);
  auto b = random_prompts(40, o, *tok_);
  auto c = random_prompts(40, round_trip_options(64, 0.2, 8, 6), *tok_);
  ASSERT_EQ(a.size(), b.size());
  size_t differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].text, b[i].text) << i;
    EXPECT_EQ(a[i].prompt_tokens, b[i].prompt_tokens) << i;
    EXPECT_EQ(a[i].output_tokens, b[i].output_tokens) << i;
    differ += a[i].text != c[i].text;
  }
  EXPECT_EQ(differ, a.size());
}

TEST_P(RoundTripRule, PromptsDoNotDependOnTheThreadCount) {
  const auto o = round_trip_options(32, 0.5, 4, 9);
  set_parallel_threads(1);
  auto one = random_prompts(1500, o, *tok_);
  set_parallel_threads(3);  // 3 uneven ranges of 500
  auto three = random_prompts(1500, o, *tok_);
  ASSERT_EQ(one.size(), three.size());
  for (size_t i = 0; i < one.size(); ++i) {
    ASSERT_EQ(one[i].text, three[i].text) << i;
    ASSERT_EQ(one[i].prompt_tokens, three[i].prompt_tokens) << i;
  }
}

TEST_P(RoundTripRule, PrefixIsSharedAndExactlyItsLength) {
  const int32_t prefix_len = 24;
  auto prompts = random_prompts(30, round_trip_options(40, 0.5, prefix_len, 3), *tok_);
  const std::vector<TokenId> first = tok_->encode(prompts[0].text);
  ASSERT_GT(first.size(), static_cast<size_t>(prefix_len));
  const std::vector<TokenId> prefix_ids(first.begin(), first.begin() + prefix_len);
  const std::string prefix_text = tok_->decode(prefix_ids);
  EXPECT_EQ(tok_->encode(prefix_text), prefix_ids);
  std::set<std::string> rests;
  for (const auto& p : prompts) {
    ASSERT_EQ(p.text.compare(0, prefix_text.size(), prefix_text), 0) << p.text;
    const std::vector<TokenId> ids = tok_->encode(p.text);
    ASSERT_EQ(ids.size(), static_cast<size_t>(p.prompt_tokens));
    EXPECT_TRUE(std::equal(prefix_ids.begin(), prefix_ids.end(), ids.begin()));
    EXPECT_GE(p.prompt_tokens, prefix_len + 20);
    EXPECT_LE(p.prompt_tokens, prefix_len + 60);
    rests.insert(p.text.substr(prefix_text.size()));
  }
  EXPECT_EQ(rests.size(), prompts.size());  // only the prefix is shared
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, RoundTripRule,
                         ::testing::Values("llama3", "qwen3", "llama2", "deepseek_v3"));

// With the built-in word rule every vocabulary word qualifies, so both rules give the same
// prompts.
TEST(RoundTripRuleWord, WholeVocabularyIsThePoolAndPromptsEqualVllmRule) {
  auto tok = tokenizer::make_word_tokenizer();
  EXPECT_EQ(RoundTripPool(*tok).size(), static_cast<size_t>(tok->vocab_size()));
  RandomOptions o = round_trip_options(50, 0.3, 6, 4);
  RandomReport report;
  auto round_trip = random_prompts(60, o, *tok, &report);
  EXPECT_EQ(report.token_pool_size, tok->vocab_size());
  o.token_rule = RandomTokenRule::kVllm;
  auto vllm = random_prompts(60, o, *tok);
  ASSERT_EQ(round_trip.size(), vllm.size());
  for (size_t i = 0; i < vllm.size(); ++i) {
    EXPECT_EQ(round_trip[i].text, vllm[i].text) << i;
    EXPECT_EQ(round_trip[i].prompt_tokens, vllm[i].prompt_tokens) << i;
  }
}

// Prompts longer than the pool wrap around it (twice here), with and without a prefix.
TEST(RoundTripRuleWord, PromptsLongerThanThePoolWrapAroundAsVllmIdsDo) {
  auto tok = tokenizer::make_word_tokenizer();
  for (int32_t prefix_len : {0, 5}) {
    RandomOptions o = round_trip_options(70'000, 0.0, prefix_len, 8);
    auto round_trip = random_prompts(3, o, *tok);
    o.token_rule = RandomTokenRule::kVllm;
    auto vllm = random_prompts(3, o, *tok);
    for (size_t i = 0; i < vllm.size(); ++i) {
      EXPECT_EQ(round_trip[i].prompt_tokens, 70'000 + prefix_len);
      EXPECT_EQ(round_trip[i].text, vllm[i].text) << "prefix " << prefix_len << ", prompt " << i;
    }
  }
}

// A tokenizer of single letters: no token is a space and a word.
class LetterTokenizer : public tokenizer::Tokenizer {
 public:
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> ids;
    for (char c : text) ids.push_back(c == ' ' ? 26 : c - 'a');
    return ids;
  }
  std::string decode(std::span<const TokenId> ids) const override {
    std::string s;
    for (TokenId id : ids) s += token_text(id);
    return s;
  }
  std::string token_text(TokenId id) const override {
    return id == 26 ? " " : std::string(1, static_cast<char>('a' + id));
  }
  int32_t vocab_size() const override { return 27; }
  std::string name() const override { return "letters"; }
};

TEST(RoundTripRuleWord, TokenizerWithoutWholeWordTokensIsAUsageErrorNamingTheFlag) {
  LetterTokenizer tok;
  try {
    random_prompts(3, round_trip_options(10, 0, 0, 1), tok);
    FAIL() << "expected an error";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    const std::string what = e.what();
    EXPECT_NE(what.find("--random-token-rule"), std::string::npos) << what;
    EXPECT_NE(what.find("letters"), std::string::npos) << what;
  }
}

TEST(RoundTripRuleWord, RuleNamesParseBothWays) {
  RandomTokenRule rule = RandomTokenRule::kVllm;
  ASSERT_TRUE(parse_token_rule("round-trip", &rule));
  EXPECT_EQ(rule, RandomTokenRule::kRoundTrip);
  EXPECT_STREQ(token_rule_name(rule), "round-trip");
  ASSERT_TRUE(parse_token_rule("vllm", &rule));
  EXPECT_EQ(rule, RandomTokenRule::kVllm);
  EXPECT_STREQ(token_rule_name(rule), "vllm");
  EXPECT_FALSE(parse_token_rule("roundtrip", &rule));
}

}  // namespace
}  // namespace servebench::dataset
