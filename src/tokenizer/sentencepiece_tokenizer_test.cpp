// SentencePiece .model files through libsentencepiece, on a small model trained here.
#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

namespace fs = std::filesystem;

TEST(SentencePieceTokenizer, EncodesAndDecodesWithATrainedModel) {
  const fs::path dir = fs::temp_directory_path() / ("servebench-spm-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream corpus(dir / "corpus.txt");
    for (int i = 0; i < 200; ++i)
      corpus << "the quick brown fox jumps over the lazy dog number " << i % 10 << "\n";
  }
  const std::string prefix = (dir / "tiny").string();
  auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + (dir / "corpus.txt").string() + " --model_prefix=" + prefix +
      " --vocab_size=60 --model_type=bpe --character_coverage=1.0 --minloglevel=2");
  ASSERT_TRUE(status.ok()) << status.ToString();

  auto tok = load_tokenizer(prefix + ".model");
  EXPECT_EQ(tok->vocab_size(), 60);
  EXPECT_EQ(tok->name(), prefix + ".model");
  const std::string text = "the lazy dog jumps over the quick brown fox";
  const auto ids = tok->encode(text);
  ASSERT_FALSE(ids.empty());
  EXPECT_LT(ids.size(), text.size());  // merges happened
  for (TokenId id : ids) {
    EXPECT_GE(id, 0);
    EXPECT_LT(id, 60);
  }
  EXPECT_EQ(tok->count(text), ids.size());
  EXPECT_EQ(tok->decode(ids), text);
  // Ids outside the vocabulary are dropped rather than failing the whole decode.
  auto with_bad = ids;
  with_bad.push_back(100000);
  with_bad.push_back(-1);
  EXPECT_EQ(tok->decode(with_bad), text);
  // One id's text is decoded on its own, where SentencePiece drops a leading "▁": the pieces
  // hold every letter of the text, in order, but not its spaces.
  std::string joined, letters;
  for (TokenId id : ids) joined += tok->token_text(id);
  for (char c : text)
    if (c != ' ') letters += c;
  joined.erase(std::remove(joined.begin(), joined.end(), ' '), joined.end());
  EXPECT_EQ(joined, letters);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace servebench::tokenizer
