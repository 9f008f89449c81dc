// File: cli/report_io.h
// What `servebench report` and `servebench compare` share: what an input argument is called.
// (Their text goes out by run::write_text, run/names.h.)
#pragma once

#include <filesystem>
#include <string>

namespace servebench::cli {

// A file is named by its stem, a directory by its own name ("results/ib/" -> "ib").
inline std::string input_name(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();
  std::error_code ec;
  return std::filesystem::is_directory(p, ec) ? p.filename().string() : p.stem().string();
}

}  // namespace servebench::cli
