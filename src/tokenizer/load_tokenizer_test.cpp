// How `--tokenizer` resolves: files, directories, the local Hugging Face cache, and the errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

namespace servebench::tokenizer {
namespace {

namespace fs = std::filesystem;

// A minimal byte-level tokenizer.json: "ab" is one token.
constexpr const char* kTinyJson = R"({
  "added_tokens": [], "normalizer": null, "decoder": {"type": "ByteLevel"},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}
})";

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

class LoadTokenizer : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("servebench-load-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(root_);
    for (const char* name : kEnv) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    fs::remove_all(root_);
    for (const auto& [name, value] : saved_) {
      if (value)
        ::setenv(name.c_str(), value->c_str(), 1);
      else
        ::unsetenv(name.c_str());
    }
  }
  static constexpr const char* kEnv[] = {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME",
                                         "XDG_CACHE_HOME", "HOME"};
  fs::path root_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The error loading `spec` gives, which must be of `kind`.
std::string error_of(const std::string& spec, core::ErrorKind kind) {
  try {
    load_tokenizer(spec);
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  return "no error";
}

TEST_F(LoadTokenizer, BuiltinIsTheWordRule) {
  EXPECT_EQ(load_tokenizer("builtin")->name(), "builtin-word");
  EXPECT_EQ(load_tokenizer("builtin-word")->count("hello world"), 2u);
}

TEST_F(LoadTokenizer, FileAndDirectory) {
  write(root_ / "model" / "tokenizer.json", kTinyJson);
  auto from_file = load_tokenizer((root_ / "model" / "tokenizer.json").string());
  EXPECT_EQ(from_file->encode("abab"), (std::vector<TokenId>{2, 2}));
  auto from_dir = load_tokenizer((root_ / "model").string());
  EXPECT_EQ(from_dir->encode("aab"), (std::vector<TokenId>{0, 2}));
  EXPECT_EQ(from_dir->name(), (root_ / "model").string());
}

TEST_F(LoadTokenizer, ModelIdFromTheHuggingFaceCache) {
  const fs::path hub = root_ / "hub";
  ::setenv("HF_HUB_CACHE", hub.c_str(), 1);
  write(hub / "models--org--tiny" / "refs" / "main", "abc123\n");
  write(hub / "models--org--tiny" / "snapshots" / "abc123" / "tokenizer.json", kTinyJson);
  write(hub / "models--org--tiny" / "snapshots" / "old" / "tokenizer.model", "not used");
  EXPECT_EQ(find_tokenizer_file("org/tiny"),
            (hub / "models--org--tiny" / "snapshots" / "abc123" / "tokenizer.json").string());
  auto tok = load_tokenizer("org/tiny");
  EXPECT_EQ(tok->name(), "org/tiny");
  EXPECT_EQ(tok->encode("ab"), (std::vector<TokenId>{2}));
  EXPECT_EQ(find_tokenizer_file("org/other"), "");
}

TEST_F(LoadTokenizer, CacheLocationFollowsHfHomeAndHome) {
  ::setenv("HOME", (root_ / "home").c_str(), 1);
  EXPECT_EQ(hf_hub_cache_dir(), (root_ / "home" / ".cache" / "huggingface" / "hub").string());
  ::setenv("XDG_CACHE_HOME", (root_ / "xdg").c_str(), 1);
  EXPECT_EQ(hf_hub_cache_dir(), (root_ / "xdg" / "huggingface" / "hub").string());
  ::setenv("HF_HOME", (root_ / "hf").c_str(), 1);
  EXPECT_EQ(hf_hub_cache_dir(), (root_ / "hf" / "hub").string());
  // Without refs/main, the snapshot that has a tokenizer.
  write(root_ / "hf" / "hub" / "models--solo" / "snapshots" / "x1" / "tokenizer.json", kTinyJson);
  EXPECT_EQ(load_tokenizer("solo")->encode("ab"), (std::vector<TokenId>{2}));
}

TEST_F(LoadTokenizer, ErrorsNameWhatWasNotFound) {
  ::setenv("HF_HUB_CACHE", (root_ / "hub").c_str(), 1);
  // A name that leads nowhere is a bad flag value; a file that is there but bad is bad input.
  EXPECT_NE(error_of("org/missing", core::ErrorKind::kUsage)
                .find("--tokenizer: 'org/missing' is not a file, a directory, or a model in the "
                      "local Hugging Face cache"),
            std::string::npos);
  fs::create_directories(root_ / "empty");
  EXPECT_NE(error_of((root_ / "empty").string(), core::ErrorKind::kUsage)
                .find("has no tokenizer.json or tokenizer.model"),
            std::string::npos);
  write(root_ / "broken" / "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": ");
  EXPECT_NE(error_of((root_ / "broken").string(), core::ErrorKind::kInput)
                .find("tokenizer.json: is not valid JSON"),
            std::string::npos);
  write(root_ / "empty.json", R"({"model":{"type":"BPE","vocab":{},"merges":[]}})");
  EXPECT_NE(error_of((root_ / "empty.json").string(), core::ErrorKind::kInput)
                .find("empty.json: model.vocab: is empty"),
            std::string::npos);
  write(root_ / "junk.model", "this is not a protobuf");
  EXPECT_NE(error_of((root_ / "junk.model").string(), core::ErrorKind::kInput)
                .find("is not a SentencePiece model"),
            std::string::npos);
}

}  // namespace
}  // namespace servebench::tokenizer
