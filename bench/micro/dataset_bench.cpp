// File: bench/micro/dataset_bench.cpp
// dataset::random_prompts: building vLLM's `random` prompts with exact token counts, done once
// before a run starts (1,000 prompts of 1,024 tokens).
#include <benchmark/benchmark.h>

#include "dataset/dataset.h"
#include "tokenizer/tokenizer.h"

namespace {

void BM_RandomPrompts(benchmark::State& state) {
  auto tokenizer = servebench::tokenizer::make_word_tokenizer();
  servebench::dataset::RandomOptions options;
  options.input_len = static_cast<int32_t>(state.range(1));
  options.output_len = 128;
  options.range_ratio = 0.1;
  options.seed = 3;
  const auto count = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    auto prompts = servebench::dataset::random_prompts(count, options, *tokenizer);
    benchmark::DoNotOptimize(prompts.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * count));
}

BENCHMARK(BM_RandomPrompts)->Args({1000, 1024})->Unit(benchmark::kMillisecond);

}  // namespace
