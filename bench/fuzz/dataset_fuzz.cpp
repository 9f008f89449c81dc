// File: bench/fuzz/dataset_fuzz.cpp
// libFuzzer target for the dataset parsers: the first byte picks one (ShareGPT JSON, custom
// JSONL, Mooncake JSONL trace, Azure CSV trace, sonnet text), the rest is the file. A parser may
// reject the input only with core::Error; anything else (a crash, a sanitizer report, another
// exception) is a finding. Built and run by bench/fuzz/run.sh, never by CTest.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "dataset/dataset.h"
#include "tokenizer/tokenizer.h"

namespace {

namespace ds = servebench::dataset;

const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("FUZZ_TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/servebench-fuzz-" + std::to_string(getpid());
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const auto tokenizer = servebench::tokenizer::make_word_tokenizer();
  const std::string& path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  try {
    switch (data[0] % 5) {
      case 0: {
        ds::ShareGptOptions o;
        o.file.path = path;
        ds::sharegpt_prompts(8, o, *tokenizer, nullptr);
        break;
      }
      case 1: {
        ds::CustomOptions o;
        o.file.path = path;
        o.output_len = (data[0] & 0x80) ? -1 : 16;
        ds::custom_prompts(8, o, *tokenizer, nullptr);
        break;
      }
      case 2: {
        ds::TraceOptions o;
        o.path = path;
        o.block_tokens = 16;  // small blocks keep each run fast
        ds::trace_prompts(8, o, *tokenizer, nullptr);
        break;
      }
      case 3: {
        ds::TraceOptions o;
        o.path = path;
        o.format = ds::TraceOptions::Format::kAzureCsv;
        ds::trace_prompts(8, o, *tokenizer, nullptr);
        break;
      }
      default: {
        ds::SonnetOptions o;
        o.path = path;
        o.input_len = 64;
        o.prefix_len = 16;
        ds::sonnet_prompts(4, o, *tokenizer, nullptr);
        break;
      }
    }
  } catch (const servebench::core::Error&) {
    // An expected rejection of a bad file.
  }
  return 0;
}
