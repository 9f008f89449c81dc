#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <string>

#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

TEST(WordTokenizer, CountsWordsPunctuationAndWhitespaceRuns) {
  auto tok = make_word_tokenizer();
  EXPECT_EQ(tok->count(""), 0u);
  EXPECT_EQ(tok->count("hello"), 1u);
  EXPECT_EQ(tok->count("hello world"), 2u);     // "hello", " world"
  EXPECT_EQ(tok->count("hello, world!"), 4u);   // "hello", ",", " world", "!"
  EXPECT_EQ(tok->count("a  b"), 3u);            // "a", " ", " b"
  EXPECT_EQ(tok->count("line\n\nnext"), 3u);    // "line", "\n\n", "next"
  EXPECT_EQ(tok->count("  "), 1u);              // one whitespace run
  EXPECT_EQ(tok->count("caf\xc3\xa9 ok"), 2u);  // UTF-8 stays inside the word
}

TEST(WordTokenizer, VocabularyWordsRoundTrip) {
  auto tok = make_word_tokenizer();
  std::vector<TokenId> ids = {0, 1, 17, 31999, 12345};
  std::string text = tok->decode(ids);
  EXPECT_EQ(text.size(), ids.size() * 7);
  EXPECT_EQ(tok->encode(text), ids);
  EXPECT_EQ(tok->count(text), ids.size());
  EXPECT_EQ(tok->token_text(0), " " + word_for_id(0));
}

TEST(WordTokenizer, EncodeCountsMatchCount) {
  auto tok = make_word_tokenizer();
  std::string text = "The quick (brown) fox -- jumps\tover 12 lazy dogs.\n";
  EXPECT_EQ(tok->encode(text).size(), tok->count(text));
  for (TokenId id : tok->encode(text)) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, tok->vocab_size());
  }
}

// count() does not split (texts of 64 bytes and more go through bit masks); encode() does.
// Random mixes of the byte classes (words, UTF-8, punctuation, single and repeated spaces,
// other whitespace, at either end and across 64-byte blocks) must agree.
TEST(WordTokenizer, CountAgreesWithEncodeOnRandomText) {
  auto tok = make_word_tokenizer();
  const std::string pieces[] = {" ", "  ", "\n", " \n", "\t ",  "ab",     "Z9_", "\xc3\xa9",
                                ",", "!?", " x", "\v",  "\x7f", "\x01`{", "@[/", "a_0"};
  std::mt19937 random(7);
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    const int parts = static_cast<int>(random() % (round % 2 ? 12 : 150));
    for (int p = 0; p < parts; ++p) text += pieces[random() % std::size(pieces)];
    ASSERT_EQ(tok->count(text), tok->encode(text).size()) << "text '" << text << "'";
  }
}

}  // namespace
}  // namespace servebench::tokenizer
