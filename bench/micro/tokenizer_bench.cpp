// File: bench/micro/tokenizer_bench.cpp
// The word tokenizer's count() and encode() in MB/s, on vocabulary text (what the simulator
// streams and the random dataset builds) and on prose-like text with punctuation.
#include <benchmark/benchmark.h>

#include <cstdint>
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

}  // namespace
