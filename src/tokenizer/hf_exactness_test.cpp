// servebench's tokenizer.json implementation against Hugging Face's own: the ids, decoded texts
// and vocabulary sizes that Hugging Face's tokenizers library (Rust, through its npm binding)
// gave for tests/tokenizer/corpus.json, recorded in tests/tokenizer/expected/ by
// tests/tokenizer/gen_expectations.mjs. The tokenizer files are fetched by
// scripts/fetch-tokenizers.sh (scripts/test.sh runs it); missing files fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string tokenizer_dir() {
  const char* dir = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  return dir && *dir ? dir : SERVEBENCH_TOKENIZER_DIR;
}

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

class Exactness : public ::testing::TestWithParam<std::string> {};

TEST_P(Exactness, MatchesHuggingFaceTokenizers) {
  const std::string name = GetParam();
  const fs::path file = fs::path(tokenizer_dir()) / name / "tokenizer.json";
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: run scripts/fetch-tokenizers.sh "
                                << "(or set SERVEBENCH_TOKENIZER_DIR)";
  const fs::path tests = fs::path(SERVEBENCH_SOURCE_DIR) / "tests" / "tokenizer";
  const json expected = read_json(tests / "expected" / (name + ".json"));
  const json corpus = read_json(tests / "corpus.json");
  ASSERT_EQ(fs::file_size(file), expected["file_bytes"].get<uintmax_t>())
      << file << " is not the file the expectations were made from ("
      << expected["package"].get<std::string>() << ")";

  auto tok = load_tokenizer(file.string());
  EXPECT_EQ(tok->vocab_size(), expected["vocab_size"].get<int32_t>());

  ASSERT_EQ(corpus.size(), expected["encode"].size());
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string text = corpus[i].get<std::string>();
    const auto want = expected["encode"][i].get<std::vector<TokenId>>();
    EXPECT_EQ(tok->encode(text), want) << name << " corpus[" << i << "]: " << text;
    EXPECT_EQ(tok->count(text), want.size()) << name << " corpus[" << i << "]";
  }
  for (const json& c : expected["decode"]) {
    const auto ids = c["ids"].get<std::vector<TokenId>>();
    const std::string text = tok->decode(ids);
    EXPECT_EQ(text, c["text"].get<std::string>()) << name << " decode of " << c["ids"].dump();
    if (c.contains("reencoded")) {
      EXPECT_EQ(tok->encode(text), c["reencoded"].get<std::vector<TokenId>>())
          << name << " re-encoding the decode of " << c["ids"].dump();
    }
  }
  for (const json& c : expected["token_text"]) {
    const auto id = c["id"].get<TokenId>();
    EXPECT_EQ(tok->token_text(id), c["text"].get<std::string>()) << name << " token " << id;
  }
}

INSTANTIATE_TEST_SUITE_P(RealTokenizers, Exactness,
                         ::testing::Values("llama3", "qwen3", "llama2", "deepseek_v3"));

}  // namespace
}  // namespace servebench::tokenizer
