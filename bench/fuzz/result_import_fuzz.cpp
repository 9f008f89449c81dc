// File: bench/fuzz/result_import_fuzz.cpp
// libFuzzer target: arbitrary bytes as a result file given to `servebench report` / `compare`
// (vLLM's and servebench's results, GuideLLM and inference-perf reports, a search.json). Reading
// it succeeds or throws core::Error naming the file; a file read must lay out in the default
// table, CSV and a comparison with itself. Anything else is a finding. Built by
// scripts/sanitize.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "report/tables.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servebench;
  static const std::string path = [] {
    const char* dir = std::getenv("FUZZ_TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/servebench-fuzz-result-" + std::to_string(getpid()) +
           ".json";
  }();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    std::vector<report::RunResult> runs = report::load_file(path);
    (void)report::vllm_suite_markdown(runs, report::MarkdownStyle::kTabulate);
    (void)report::figures_csv(runs);
    std::vector<report::CompareInput> inputs = {{"a", runs}, {"b", runs}};
    (void)report::compare_runs(inputs, {}, report::CompareMatch::kByOrder,
                               report::CompareFormat::kJson);
  } catch (const core::Error&) {
  }
  return 0;
}
