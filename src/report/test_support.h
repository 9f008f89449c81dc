// File: report/test_support.h (the report part's tests only)
// Reading the golden files under src/report/testdata/, splitting text into lines and cells, and
// example figures the console and JSON tests share.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/tables.h"
#include "server_metrics/server_metrics.h"

namespace servebench::report::test_support {

// Speculative decoding over a run, hand-computed: 75 of 120 draft tokens accepted over 40 drafts.
inline server_metrics::SpecDecodeStats example_spec_decode() {
  server_metrics::SpecDecodeStats sd;
  sd.num_drafts = 40;
  sd.draft_tokens = 120;
  sd.accepted_tokens = 75;
  sd.acceptance_rate = 62.5;
  sd.acceptance_length = 2.875;
  sd.per_position_acceptance_rates = {0.9, 0.625, 0.35};
  return sd;
}

inline std::string testdata_path(const std::string& name) {
  return std::string(SERVEBENCH_SOURCE_DIR) + "/src/report/testdata/" + name;
}

inline std::string testdata(const std::string& name) {
  std::ifstream in(testdata_path(name));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

inline std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The cells of a line split at every '|', trimmed.
inline std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, '|')) cells.push_back(trim(cell));
  return cells;
}

// The cells of a markdown table line, outer pipes dropped.
inline std::vector<std::string> markdown_cells(const std::string& line) {
  return split_cells(line.substr(1, line.size() - 2));
}

// A directory of its own for the running test, removed with everything in it.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("servebench_report_test_" +
               std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Every refusal is a core::Error of kind kInput whose one line names the file and says `what`.
inline void expect_refused(const std::string& path, const std::string& what) {
  try {
    load_runs(path);
    ADD_FAILURE() << path << " was accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace servebench::report::test_support
