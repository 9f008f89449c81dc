// The table shapes, byte for byte against the seeds: each golden under testdata/ is a table cut
// from /work/shared/seeds/, its cells fed back in, the whole text compared.
#include "report/text_tables.h"

#include <gtest/gtest.h>

#include "report/test_support.h"

#include <cmath>
#include <fstream>
#include <sstream>

namespace servebench::report::text {
namespace {

using namespace test_support;

bool looks_numeric(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789.-+e") == std::string::npos;
}

TEST(PythonFormats, MatchPythonsOutput) {
  EXPECT_EQ(python_g(0.9247087073539347), "0.924709");
  EXPECT_EQ(python_g(1002.3081180006557), "1002.31");
  EXPECT_EQ(python_g(200), "200");
  EXPECT_EQ(python_g(1234567.0), "1.23457e+06");
  EXPECT_EQ(python_g(0.00001234), "1.234e-05");
  EXPECT_EQ(python_repr(2.0), "2.0");
  EXPECT_EQ(python_repr(4.202913660966805), "4.202913660966805");
  EXPECT_EQ(python_repr(0.1), "0.1");
  EXPECT_EQ(python_repr(INFINITY), "inf");
  EXPECT_EQ(round2(23.0), "23");
  EXPECT_EQ(round2(0.9), "0.9");
  EXPECT_EQ(round2(40.268), "40.27");
  EXPECT_EQ(round2(-0.001), "0");
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
}

// Seed 002's table came from tabulate; its first column was cut shorter by hand afterwards, so
// everything right of the test name is compared.
TEST(TabulatePipe, ReproducesSeed002RightOfTheTestName) {
  const std::vector<std::string> golden = lines_of(testdata("seed002_serving.md"));
  ASSERT_EQ(golden.size(), 6u);
  const std::vector<std::string> headers = markdown_cells(golden[0]);
  ASSERT_EQ(headers.size(), 15u);
  std::vector<Row> rows;
  for (size_t i = 2; i < golden.size(); ++i) {
    Row row;
    for (const std::string& c : markdown_cells(golden[i])) row.push_back({c, looks_numeric(c)});
    rows.push_back(row);
  }
  const std::vector<std::string> out = lines_of(tabulate_pipe(headers, rows));
  ASSERT_EQ(out.size(), golden.size());
  for (size_t i = 0; i < golden.size(); ++i) {
    const auto after_name = [](const std::string& l) { return l.substr(l.find('|', 1)); };
    EXPECT_EQ(after_name(out[i]), after_name(golden[i])) << "line " << i;
  }
  // The test-name column is tabulate's own: header plus 2, or the longest name.
  EXPECT_EQ(out[0].substr(0, out[0].find('|', 1)), "| Test name                    ");
}

TEST(TabulatePipe, StringColumnsLeftNumbersDecimalAligned) {
  const std::string out =
      tabulate_pipe({"name", "x"}, {{{"a", false}, {"1.5", true}}, {{"bb", false}, {"10", true}}});
  EXPECT_EQ(out,
            "| name   |    x |\n"
            "|:-------|-----:|\n"
            "| a      |  1.5 |\n"
            "| bb     | 10   |\n");
}

TEST(AlignedMarkdown, ReproducesSeed000AndSeed003) {
  for (const char* name : {"seed000_cumulative.md", "seed003_inference_perf.md"}) {
    const std::string golden = testdata(name);
    const std::vector<std::string> lines = lines_of(golden);
    ASSERT_GT(lines.size(), 2u) << name;
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 2; i < lines.size(); ++i) rows.push_back(markdown_cells(lines[i]));
    EXPECT_EQ(aligned_markdown(markdown_cells(lines[0]), rows), golden) << name;
  }
}

void expect_guidellm_table(const std::string& file,
                           const std::vector<std::pair<std::string, size_t>>& sections) {
  const std::string golden = testdata(file);
  const std::vector<std::string> lines = lines_of(golden);
  ASSERT_GT(lines.size(), 5u);
  const std::vector<std::string> headers = split_cells(lines[2]);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 4; i + 1 < lines.size(); ++i) rows.push_back(split_cells(lines[i]));
  EXPECT_EQ(guidellm_console_table(sections, headers, rows), golden);
}

TEST(GuidellmConsoleTable, ReproducesSeed003BenchmarksInfo) {
  expect_guidellm_table("seed003_guidellm_info.txt", {{"Metadata", 3},
                                                      {"Requests Made", 6},
                                                      {"Prompt Tok/Req", 9},
                                                      {"Output Tok/Req", 12},
                                                      {"Prompt Tok Total", 15},
                                                      {"Output Tok Total", 18}});
}

TEST(GuidellmConsoleTable, ReproducesSeed003BenchmarksStats) {
  expect_guidellm_table("seed003_guidellm_stats.txt", {{"Metadata", 0},
                                                       {"Request Stats", 2},
                                                       {"Out Tok/sec", 3},
                                                       {"Tot Tok/sec", 4},
                                                       {"Req Latency (ms)", 7},
                                                       {"TTFT (ms)", 10},
                                                       {"ITL (ms)", 13},
                                                       {"TPOT (ms)", 16}});
}

TEST(GuidellmConsoleTable, WidensColumnsUnderALongSection) {
  // "Long section" (12) over two 1-wide columns: each grows by ceil((12 + 1 - 4) / 2) = 5.
  const std::string out = guidellm_console_table({{"Long section", 1}}, {"a", "b"}, {{"1", "2"}});
  EXPECT_EQ(out,
            "==============\n"
            "Long section |\n"
            "     a|      b\n"
            "------|-------\n"
            "     1|      2\n"
            "==============\n");
}

}  // namespace
}  // namespace servebench::report::text
