// File: bench/fuzz/suite_file_fuzz.cpp
// libFuzzer target: arbitrary bytes as a `servebench suite` file (YAML or JSON). Reading it
// succeeds or throws core::Error naming the file and the key; any other exception (a yaml-cpp
// one let through), a crash or a sanitizer report is a finding. Built by scripts/sanitize.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/suite.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace servebench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const cli::suite::Test& test : cli::suite::parse(text, "fuzz.yaml")) {
      (void)cli::suite::command_line(cli::suite::full_run_args(test, "/tmp/fuzz-results"));
    }
  } catch (const core::Error&) {
  }
  return 0;
}
