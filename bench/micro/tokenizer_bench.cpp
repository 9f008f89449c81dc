// File: bench/micro/tokenizer_bench.cpp
// The word tokenizer's count() and encode() in MB/s, on vocabulary text (what the simulator
// streams and the random dataset builds) and on prose-like text with punctuation. Then each real
// tokenizer.json fetched by scripts/fetch-tokenizers.sh (build-deps/tokenizers, or
// $SERVEBENCH_TOKENIZER_DIR): encode MB/s on one core over a realistic mix (this repository's
// Markdown and C++, plus the multilingual test corpus), on the random dataset's text of
// consecutive ids (BM_EncodeRandomIds), and decode of random-dataset id runs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

using servebench::tokenizer::make_word_tokenizer;
using servebench::tokenizer::TokenId;

// About 1 MB of vocabulary words (" xxxxxx" each), ids spread over the vocabulary.
std::string vocabulary_text() {
  auto tokenizer = make_word_tokenizer();
  std::vector<TokenId> ids;
  for (int i = 0; i < 150'000; ++i) ids.push_back((i * 7919) % tokenizer->vocab_size());
  return tokenizer->decode(ids);
}

// About 1 MB of prose-like text: words, punctuation, newlines, some UTF-8.
std::string prose_text() {
  const std::string sentence =
      "The quick brown fox, naïve as ever, jumped over 13 lazy dogs; then it asked: \"why?\"\n";
  std::string text;
  while (text.size() < (1u << 20)) text += sentence;
  return text;
}

void BM_WordTokenizerCount(benchmark::State& state, const std::string& text) {
  auto tokenizer = make_word_tokenizer();
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = tokenizer->count(text);
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_WordTokenizerEncode(benchmark::State& state, const std::string& text) {
  auto tokenizer = make_word_tokenizer();
  for (auto _ : state) {
    auto ids = tokenizer->encode(text);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

// One streamed token's text: what the client counts per SSE event when no usage is sent.
void BM_WordTokenizerCountOneToken(benchmark::State& state) {
  auto tokenizer = make_word_tokenizer();
  const std::string token = tokenizer->token_text(12345);
  for (auto _ : state) benchmark::DoNotOptimize(tokenizer->count(token));
  state.SetItemsProcessed(state.iterations());
}

const std::string kVocabularyText = vocabulary_text();
const std::string kProseText = prose_text();

BENCHMARK_CAPTURE(BM_WordTokenizerCount, vocabulary, kVocabularyText);
BENCHMARK_CAPTURE(BM_WordTokenizerCount, prose, kProseText);
BENCHMARK_CAPTURE(BM_WordTokenizerEncode, vocabulary, kVocabularyText);
BENCHMARK_CAPTURE(BM_WordTokenizerEncode, prose, kProseText);
BENCHMARK(BM_WordTokenizerCountOneToken);

// ---- real tokenizers

namespace fs = std::filesystem;
using servebench::tokenizer::Tokenizer;

const fs::path kRepo = fs::path(__FILE__).parent_path().parent_path().parent_path();

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

// About 1 MB: every Markdown file under docs/ and C++ file under src/ (sorted, so the mix is the
// same on every machine for one commit), then the multilingual corpus, repeated up to 1 MB.
std::string mixed_text() {
  std::vector<fs::path> files;
  for (const char* dir : {"docs", "src"}) {
    for (const auto& e : fs::recursive_directory_iterator(kRepo / dir)) {
      const auto ext = e.path().extension();
      if (e.is_regular_file() && (ext == ".md" || ext == ".cpp" || ext == ".h"))
        files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::string text;
  const std::string corpus = slurp(kRepo / "tests" / "tokenizer" / "corpus.json");
  for (const auto& f : files) {
    if (text.size() > 800'000) break;
    text += slurp(f);
  }
  while (text.size() < 1'000'000) text += corpus;
  return text;
}

void BM_Encode(benchmark::State& state, std::shared_ptr<const Tokenizer> tok,
               const std::string& text) {
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = tok->encode(text).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

// What the random dataset does per prompt: decode 1,024 consecutive ids.
void BM_Decode1024(benchmark::State& state, std::shared_ptr<const Tokenizer> tok) {
  std::vector<servebench::tokenizer::TokenId> ids(1024);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = static_cast<servebench::tokenizer::TokenId>((1000 + i * 7) % tok->vocab_size());
  for (auto _ : state) benchmark::DoNotOptimize(tok->decode(ids).size());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ids.size()));
}

// What the random dataset re-encodes: 1,000 prompts of 1,024 consecutive ids from random
// offsets (vLLM's rule), decoded, each encoded on its own. Few pieces of such text repeat within
// a prompt, so this measures the encoder on cold, unusual pieces.
void BM_EncodeRandomIds(benchmark::State& state, std::shared_ptr<const Tokenizer> tok) {
  std::vector<std::string> texts;
  std::mt19937_64 rng(5);
  size_t bytes = 0;
  for (int k = 0; k < 1000; ++k) {
    std::vector<servebench::tokenizer::TokenId> ids(1024);
    const uint64_t offset = rng() % static_cast<uint64_t>(tok->vocab_size());
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = static_cast<servebench::tokenizer::TokenId>(
          (offset + i) % static_cast<uint64_t>(tok->vocab_size()));
    texts.push_back(tok->decode(ids));
    bytes += texts.back().size();
  }
  size_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const std::string& text : texts) tokens += tok->encode(text).size();
    benchmark::DoNotOptimize(tokens);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["tokens"] = static_cast<double>(tokens);
}

// Registered at start-up for each tokenizer file present; none present, none registered.
const bool kRealTokenizersRegistered = [] {
  const char* env = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  const fs::path dir = env && *env ? fs::path(env) : kRepo / "build-deps" / "tokenizers";
  static const std::string text = mixed_text();
  for (const char* name : {"llama3", "qwen3", "llama2", "deepseek_v3"}) {
    const fs::path file = dir / name / "tokenizer.json";
    if (!fs::exists(file)) continue;
    std::shared_ptr<const Tokenizer> tok = servebench::tokenizer::load_tokenizer(file.string());
    benchmark::RegisterBenchmark((std::string("BM_Encode/") + name).c_str(), BM_Encode, tok, text);
    benchmark::RegisterBenchmark((std::string("BM_Decode1024/") + name).c_str(), BM_Decode1024,
                                 tok);
    benchmark::RegisterBenchmark((std::string("BM_EncodeRandomIds/") + name).c_str(),
                                 BM_EncodeRandomIds, tok)
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
