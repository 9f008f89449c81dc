// File: bench/micro/dataset_bench.cpp
// Building prompts before a run starts (docs/performance.md, "Datasets"):
//   BM_RandomPrompts    vLLM's `random` prompts with exact token counts (1,000 and 100,000 of
//                       1,024 tokens), with the word rule and, when scripts/fetch-tokenizers.sh
//                       has fetched it, Llama 3's tokenizer.json (BM_RandomPrompts/llama3), and
//                       the round-trip rule with each real file (BM_RandomPrompts/<name>_roundtrip)
//   BM_ShareGptLarge    load a 650 MB ShareGPT-format file, shuffle, filter, tokenize and keep
//                       1,000 prompts (the file is generated once into $TMPDIR or /tmp, never
//                       committed; SERVEBENCH_SHAREGPT_MB changes its size)
// Run with --benchmark_repetitions=5 for medians.
#include <benchmark/benchmark.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

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

BENCHMARK(BM_RandomPrompts)
    ->Args({1000, 1024})
    ->Args({100000, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RandomPromptsWith(benchmark::State& state,
                          std::shared_ptr<const servebench::tokenizer::Tokenizer> tokenizer,
                          size_t count, servebench::dataset::RandomTokenRule rule) {
  servebench::dataset::RandomOptions options;
  options.input_len = 1024;
  options.output_len = 128;
  options.range_ratio = 0.1;
  options.seed = 3;
  options.token_rule = rule;
  servebench::dataset::RandomReport report;
  for (auto _ : state) {
    auto prompts = servebench::dataset::random_prompts(count, options, *tokenizer, &report);
    benchmark::DoNotOptimize(prompts.data());
  }
  state.counters["token_mismatch"] = static_cast<double>(report.token_mismatch);
  state.counters["token_pool"] = static_cast<double>(report.token_pool_size);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * count));
}

// Registered only when the real file is there (the tokenizer benchmark's rule): vLLM's rule
// with Llama 3's file; the round-trip rule (pool built inside the timing) with each file.
// CPU time is the whole process's (the prompts are settled on every core).
const bool kRealTokenizerRegistered = [] {
  using servebench::dataset::RandomTokenRule;
  const char* env = std::getenv("SERVEBENCH_TOKENIZER_DIR");
  const std::filesystem::path dir =
      env && *env ? std::filesystem::path(env)
                  : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() /
                        "build-deps" / "tokenizers";
  for (const char* name : {"llama3", "qwen3", "llama2", "deepseek_v3"}) {
    const std::filesystem::path file = dir / name / "tokenizer.json";
    if (!std::filesystem::exists(file)) continue;
    std::shared_ptr<const servebench::tokenizer::Tokenizer> tokenizer =
        servebench::tokenizer::load_tokenizer(file.string());
    for (size_t count : {size_t{1000}, size_t{100000}}) {
      const std::string size = "/" + std::to_string(count) + "/1024";
      if (std::string(name) == "llama3") {
        benchmark::RegisterBenchmark(("BM_RandomPrompts/llama3" + size).c_str(),
                                     BM_RandomPromptsWith, tokenizer, count, RandomTokenRule::kVllm)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime()
            ->MeasureProcessCPUTime();
      }
      benchmark::RegisterBenchmark(
          ("BM_RandomPrompts/" + std::string(name) + "_roundtrip" + size).c_str(),
          BM_RandomPromptsWith, tokenizer, count, RandomTokenRule::kRoundTrip)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MeasureProcessCPUTime();
    }
  }
  return true;
}();

// A ShareGPT-shaped file: conversations of 1 to 10 turns of made-up words (a few escapes and
// non-ASCII letters, as in the real file), written until it reaches `bytes`.
std::string large_sharegpt_file() {
  const char* mb_env = std::getenv("SERVEBENCH_SHAREGPT_MB");
  const size_t bytes = static_cast<size_t>(mb_env ? std::atoll(mb_env) : 650) << 20;
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/servebench-sharegpt-" +
                           std::to_string(bytes >> 20) + "mb.json";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) >= bytes) return path;

  static const char* kWords[] = {"the",     "model",   "server",
                                 "token",   "prompt",  "cache",
                                 "latency", "write",   "function",
                                 "data",    "python",  "answer",
                                 "explain", "why",     "r\\u00e9sum\\u00e9",
                                 "code",    "list",    "please",
                                 "thanks",  "example", "\\\"quoted\\\"",
                                 "value"};
  constexpr size_t kWordCount = sizeof(kWords) / sizeof(kWords[0]);
  std::mt19937_64 rng(42);
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (!out) return "";
  std::string chunk = "[";
  size_t written = 0, id = 0;
  while (written + chunk.size() < bytes) {
    if (id > 0) chunk += ",";
    chunk += "\n {\"id\": \"conv" + std::to_string(id++) + "\", \"conversations\": [";
    const size_t turns = 1 + rng() % 10;
    for (size_t t = 0; t < turns; ++t) {
      chunk += t ? ", " : "";
      chunk += t % 2 ? "{\"from\": \"gpt\", \"value\": \"" : "{\"from\": \"human\", \"value\": \"";
      const size_t words = 20 + rng() % 380;
      for (size_t w = 0; w < words; ++w) {
        if (w) chunk += (rng() % 12 == 0) ? ".\\n" : " ";
        chunk += kWords[rng() % kWordCount];
      }
      chunk += "\"}";
    }
    chunk += "]}";
    if (chunk.size() > (1 << 20)) {
      written += std::fwrite(chunk.data(), 1, chunk.size(), out);
      chunk.clear();
    }
  }
  chunk += "\n]\n";
  std::fwrite(chunk.data(), 1, chunk.size(), out);
  std::fclose(out);
  return path;
}

void BM_ShareGptLarge(benchmark::State& state) {
  const std::string path = large_sharegpt_file();
  if (path.empty()) {
    state.SkipWithError("cannot write the ShareGPT file");
    return;
  }
  auto tokenizer = servebench::tokenizer::make_word_tokenizer();
  servebench::dataset::ShareGptOptions options;
  options.file.path = path;
  const auto count = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    auto prompts = servebench::dataset::sharegpt_prompts(count, options, *tokenizer, nullptr);
    benchmark::DoNotOptimize(prompts.data());
  }
  struct stat st {};
  stat(path.c_str(), &st);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * st.st_size);
}

BENCHMARK(BM_ShareGptLarge)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
