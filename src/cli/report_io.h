// File: cli/report_io.h
// What `servebench report` and `servebench compare` share: where their text goes.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include "core/error.h"

namespace servebench::cli {

// Writes `text` to `path`, or to stdout when `path` is empty; an unwritable file is a
// core::Error naming it.
inline void write_report(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw core::Error(core::ErrorKind::kInput, path, "cannot write the output file");
}

}  // namespace servebench::cli
