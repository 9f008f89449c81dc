// tokenizer.json features on small hand-made files. Expected ids and texts are what Hugging
// Face's tokenizers 0.23.2 (npm binding of the Rust library) returned for these same files.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

using nlohmann::json;
using Ids = std::vector<TokenId>;

json added(int id, const std::string& content, json flags = json::object()) {
  json t = {{"id", id},        {"content", content},  {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", false}, {"special", false}};
  t.update(flags);
  return t;
}

// Byte-level BPE (GPT-2 style) with three added tokens: a special one, one that strips the
// whitespace around it, and a single-word one matched after normalization.
json byte_level_file() {
  return {
      {"added_tokens",
       {added(9, "<|x|>", {{"special", true}}),
        added(10, "[L]", {{"lstrip", true}, {"rstrip", true}}),
        added(11, "cab", {{"single_word", true}, {"normalized", true}})}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"vocab",
         {{"a", 0},
          {"b", 1},
          {"c", 2},
          {"Ġ", 3},
          {"ab", 4},
          {"bc", 5},
          {"abc", 6},
          {"Ġa", 7},
          {"aa", 8}}},
        {"merges", {"b c", "a b", "a bc", "Ġ a", "a a"}}}}};
}

// SentencePiece-style BPE as Llama 2's tokenizer.json writes it: Prepend/Replace normalizers,
// byte fallback, and the Replace/ByteFallback/Fuse/Strip decoders.
json sentencepiece_file() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 2 + b;
  }
  vocab.update({{"▁", 258}, {"h", 259}, {"i", 260}, {"▁h", 261}, {"▁hi", 262}, {"é", 263}});
  return {{"added_tokens",
           {added(0, "<unk>", {{"special", true}}), added(1, "<s>", {{"special", true}})}},
          {"normalizer",
           {{"type", "Sequence"},
            {"normalizers",
             {{{"type", "Prepend"}, {"prepend", "▁"}},
              {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}}},
          {"pre_tokenizer", nullptr},
          {"decoder",
           {{"type", "Sequence"},
            {"decoders",
             {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
              {{"type", "ByteFallback"}},
              {{"type", "Fuse"}},
              {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
          {"model",
           {{"type", "BPE"},
            {"unk_token", "<unk>"},
            {"fuse_unk", true},
            {"byte_fallback", true},
            {"vocab", vocab},
            {"merges", json::array({json::array({"▁", "h"}), json::array({"▁h", "i"})})}}}};
}

std::unique_ptr<Tokenizer> load(const json& file) {
  return parse_hf_tokenizer_json(file.dump(), "test.json", "test");
}

constexpr TokenId kByte = 2;  // id of <0x00> in sentencepiece_file()

TEST(HfTokenizer, ByteLevelBpeAppliesMergesByRankLeftmostFirst) {
  auto tok = load(byte_level_file());
  EXPECT_EQ(tok->encode("abc"), (Ids{6}));  // "b c" (rank 0) first, then "a bc"
  EXPECT_EQ(tok->encode("aaa"), (Ids{8, 0}));
  EXPECT_EQ(tok->encode("ab ab"), (Ids{4, 3, 4}));  // "Ġ ab" is no merge
  EXPECT_EQ(tok->encode("abcab"), (Ids{6, 4}));
  EXPECT_EQ(tok->encode("a\xc3\xa9"), (Ids{0}));  // é's bytes are not in the vocabulary
  EXPECT_EQ(tok->count("ab ab"), 3u);
  EXPECT_EQ(tok->vocab_size(), 9);
}

TEST(HfTokenizer, AddedTokensSplitStripAndMatchWholeWords) {
  auto tok = load(byte_level_file());
  EXPECT_EQ(tok->encode("a<|x|>b"), (Ids{0, 9, 1}));
  EXPECT_EQ(tok->encode("a  [L]  b"), (Ids{0, 10, 1}));         // lstrip and rstrip
  EXPECT_EQ(tok->encode("cab c cab"), (Ids{11, 3, 2, 3, 11}));  // single_word: whole words only
  EXPECT_EQ(tok->decode(Ids{6, 3, 0, 9, 10}), "abc a<|x|>[L]");
}

TEST(HfTokenizer, SentencePieceStyleNormalizesAndFallsBackToBytes) {
  auto tok = load(sentencepiece_file());
  EXPECT_EQ(tok->encode("hi"), (Ids{262}));
  EXPECT_EQ(tok->encode("hi hi"), (Ids{262, 262}));
  EXPECT_EQ(tok->encode("h\xc3\xa9"), (Ids{261, 263}));
  EXPECT_EQ(tok->encode("h\xe2\x82\xac"), (Ids{261, kByte + 0xE2, kByte + 0x82, kByte + 0xAC}));
  // Special tokens split the text first; each piece is then normalized on its own.
  EXPECT_EQ(tok->encode("<s>hi"), (Ids{1, 262}));
  EXPECT_EQ(tok->encode("hi<s> hi"), (Ids{262, 1, 258, 262}));
}

TEST(HfTokenizer, SentencePieceStyleDecodesBytesAndStripsTheFirstSpace) {
  auto tok = load(sentencepiece_file());
  EXPECT_EQ(tok->decode(Ids{262, kByte + 0xE2, kByte + 0x82, kByte + 0xAC}), "hi\xe2\x82\xac");
  EXPECT_EQ(tok->decode(Ids{kByte + 0xE2, 262}), "\xef\xbf\xbd hi");  // a lone byte: U+FFFD
  EXPECT_EQ(tok->decode(Ids{1, 262, 0}), "<s> hi<unk>");
  EXPECT_EQ(tok->decode(Ids{262, 99999, -1}), "hi");  // unknown ids are dropped
  EXPECT_EQ(tok->token_text(262), "hi");
}

TEST(HfTokenizer, UnknownCharactersFuseIntoOneUnkWithoutByteFallback) {
  json file = sentencepiece_file();
  file["model"]["byte_fallback"] = false;
  auto tok = load(file);
  EXPECT_EQ(tok->encode("h\xe2\x82\xac\xe2\x82\xaci"), (Ids{261, 0, 260}));
  EXPECT_EQ(tok->encode("h\xe2\x82\xaci\xe2\x82\xac"), (Ids{261, 0, 260, 0}));
}

TEST(HfTokenizer, MetaspacePreTokenizerAndDecoder) {
  json file = sentencepiece_file();
  file["model"]["byte_fallback"] = false;
  file["normalizer"] = nullptr;
  file["pre_tokenizer"] = {
      {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}, {"split", true}};
  file["decoder"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "first"}};
  auto tok = load(file);
  EXPECT_EQ(tok->encode("hi hi"), (Ids{262, 262}));
  EXPECT_EQ(tok->encode("<s>hi hi"), (Ids{1, 259, 260, 262}));  // "first": only at the start
  EXPECT_EQ(tok->encode(" hi"), (Ids{262}));
  EXPECT_EQ(tok->encode("hi  hi"), (Ids{262, 258, 262}));
  EXPECT_EQ(tok->decode(Ids{262, 262}), "hi hi");
  EXPECT_EQ(tok->decode(Ids{258, 258, 259}), " h");
  EXPECT_EQ(tok->decode(Ids{1, 262}), "<s> hi");
}

TEST(HfTokenizer, InvalidUtf8IsEncodedAsReplacementCharacters) {
  auto tok = load(byte_level_file());
  // Rust and Python strings cannot hold these bytes; they read as U+FFFD (not in this vocab).
  EXPECT_EQ(tok->encode("a\xff"
                        "b"),
            tok->encode("a\xef\xbf\xbd"
                        "b"));
  EXPECT_EQ(tok->encode("a\xff"
                        "b"),
            (Ids{0, 1}));
}

// Every malformed or unsupported file is one core::Error naming the file and the JSON place.
void expect_error(const std::string& text, const std::string& needle) {
  try {
    parse_hf_tokenizer_json(text, "bad.json", "bad");
    ADD_FAILURE() << "no error for " << text.substr(0, 200);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "'" << e.what() << "' lacks '" << needle << "'";
  }
}

TEST(HfTokenizer, MalformedFilesAreErrorsNamingThePlace) {
  expect_error("{\"model\": ", "bad.json: is not valid JSON");
  expect_error("[1, 2]", "bad.json: expected an object");
  expect_error("{}", "bad.json: model: is required");
  json file = byte_level_file();
  file["model"]["type"] = "WordPiece";
  expect_error(file.dump(), "bad.json: model.type: model 'WordPiece' is not supported");
  file = byte_level_file();
  file["model"].erase("vocab");
  expect_error(file.dump(), "bad.json: model.vocab: is required");
  file = byte_level_file();
  file["model"]["merges"].push_back("a zz");
  expect_error(file.dump(), "bad.json: model.merges[5]: 'zz' is not in the vocabulary");
  file = byte_level_file();
  file["model"]["merges"][1] = "a b c";
  expect_error(file.dump(), "bad.json: model.merges[1]: expected \"LEFT RIGHT\"");
  file = byte_level_file();
  file["model"]["vocab"]["a"] = -4;
  expect_error(file.dump(), "bad.json: model.vocab.a: id -4 is out of range");
  file = byte_level_file();
  file["model"]["vocab"]["a"] = "zero";
  expect_error(file.dump(), "bad.json: model.vocab.a: expected an integer");
  file = byte_level_file();
  file["model"]["unk_token"] = "<nope>";
  expect_error(file.dump(), "bad.json: model.unk_token: '<nope>' is not in the vocabulary");
  file = byte_level_file();
  file["model"]["dropout"] = 0.1;
  expect_error(file.dump(), "bad.json: model.dropout: BPE dropout is not supported");
  // An empty vocabulary once reached the simulator, which took ids modulo its size (SIGFPE).
  file = byte_level_file();
  file["model"]["vocab"] = json::object();
  file["model"]["merges"] = json::array();
  file.erase("added_tokens");
  expect_error(file.dump(), "bad.json: model.vocab: is empty");
  file = byte_level_file();
  file["added_tokens"][1].erase("content");
  expect_error(file.dump(), "bad.json: added_tokens[1].content: is required");
}

TEST(HfTokenizer, UnsupportedComponentsAreNamed) {
  json file = byte_level_file();
  file["pre_tokenizer"] = {{"type", "Sequence"},
                           {"pretokenizers", {{{"type", "Digits"}}, {{"type", "Whitespace"}}}}};
  expect_error(file.dump(),
               "bad.json: pre_tokenizer.pretokenizers[1].type: pre-tokenizer 'Whitespace' is not "
               "supported");
  file["pre_tokenizer"] = {{"type", "Sequence"},
                           {"pretokenizers", {{{"type", "ByteLevel"}}, {{"type", "Digits"}}}}};
  expect_error(file.dump(),
               "pre_tokenizer.pretokenizers[1].type: pre-tokenizer 'Digits' after "
               "ByteLevel is not supported");
  file = byte_level_file();
  file["normalizer"] = {{"type", "BertNormalizer"}};
  expect_error(file.dump(),
               "bad.json: normalizer.type: normalizer 'BertNormalizer' is not supported");
  file = byte_level_file();
  file["decoder"] = {{"type", "WordPiece"}};
  expect_error(file.dump(), "bad.json: decoder.type: decoder 'WordPiece' is not supported");
  file = byte_level_file();
  file["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  expect_error(file.dump(), "bad.json: pre_tokenizer.pattern: regex does not compile");
  file["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "a"}}}, {"behavior", "Sideways"}};
  expect_error(file.dump(), "bad.json: pre_tokenizer.behavior: split behavior 'Sideways'");
}

TEST(HfTokenizer, SplitBehaviorsAndDigits) {
  json file = sentencepiece_file();
  file["normalizer"] = nullptr;
  file["decoder"] = nullptr;
  // Split on "h": Removed drops it, MergedWithNext glues it to what follows.
  file["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"String", "h"}}}, {"behavior", "Removed"}};
  EXPECT_EQ(load(file)->encode("ihi"), (Ids{260, 260}));
  file["pre_tokenizer"]["behavior"] = "MergedWithNext";
  EXPECT_EQ(load(file)->encode("ihi"), (Ids{260, 259, 260}));
  file["pre_tokenizer"]["behavior"] = "Isolated";
  EXPECT_EQ(load(file)->encode("ihi"), (Ids{260, 259, 260}));
  file["pre_tokenizer"] = {{"type", "Digits"}, {"individual_digits", true}};
  // Without a decoder, tokens are joined with spaces (Hugging Face's default).
  EXPECT_EQ(load(file)->decode(Ids{259, 260}), "h i");
}

}  // namespace
}  // namespace servebench::tokenizer
