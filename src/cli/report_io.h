// File: cli/report_io.h
// What `servebench report` and `servebench compare` share: where their text goes, and what an
// input argument is called.
#pragma once

#include <cstdio>
#include <filesystem>
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

// A file is named by its stem, a directory by its own name ("results/ib/" -> "ib").
inline std::string input_name(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  std::error_code ec;
  return std::filesystem::is_directory(p, ec) ? p.filename().string() : p.stem().string();
}

}  // namespace servebench::cli
