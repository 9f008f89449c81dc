// File: bench/fuzz/tokenizer_json_fuzz.cpp
// libFuzzer target: arbitrary bytes as a tokenizer.json. Loading must either succeed or throw
// core::Error (one line naming the place); a loaded tokenizer must then encode and decode
// without crashing. Anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servebench;
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<tokenizer::Tokenizer> tok;
  try {
    tok = tokenizer::parse_hf_tokenizer_json(json, "fuzz.json", "fuzz");
  } catch (const core::Error&) {
    return 0;
  }
  try {
    for (std::string_view text :
         {"", "hello world", "  a\tb\r\n12345 caf\xc3\xa9 <s>\xf0\x9f\x91\x8d", "\xff\xfe invalid",
          "<|endoftext|><unk>"}) {
      std::vector<tokenizer::TokenId> ids = tok->encode(text);
      (void)tok->decode(ids);
    }
    std::vector<tokenizer::TokenId> run;
    for (tokenizer::TokenId id = -2; id < 300; ++id) run.push_back(id);
    (void)tok->decode(run);
    (void)tok->token_text(0);
  } catch (const core::Error&) {
    // A pattern too costly for PCRE2's limits is reported, not a crash.
  }
  return 0;
}
