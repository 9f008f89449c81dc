// File: report/test_support.h (the report part's tests only)
// Reading the golden files under src/report/testdata/, splitting text into lines and cells, and
// example figures the console and JSON tests share.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace servebench::report::test_support
