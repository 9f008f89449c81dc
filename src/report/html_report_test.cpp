// The HTML report: one self-contained page with the metadata, the seed tables and a chart per
// kind with data; tests/report/render_html_test.py renders it in Chromium.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "report/charts.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using namespace test_support;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string seed000_html() {
  const std::vector<CompareInput> inputs = {{"seed000", load_runs(testdata_path("seed000"))}};
  return html_report(inputs, {}, ChartStat::kMean);
}

TEST(HtmlReport, HeaderTablesAndCharts) {
  const std::string html = seed000_html();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<dt>Runs</dt><dd>12</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dt>Series</dt><dd>tp4_pp2_IB (4 runs); tp4_pp2_no_IB (4 runs); "
                      "tp8_pp1 (4 runs)</dd>"),
            std::string::npos);
  EXPECT_NE(html.find("<dd>deepseek-ai/DeepSeek-V2.5</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dt>Series by</dt><dd>result key deployment</dd>"), std::string::npos);
  EXPECT_NE(html.find("<dt>Latency statistic</dt><dd>mean</dd>"), std::string::npos);
  // vLLM's serving table, seed 000's columns and numbers, numeric cells right-aligned.
  EXPECT_NE(html.find("<th>Test name</th><th>GPU</th><th># of req.</th><th>Tput (req/s)</th>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"left\">tp8_pp1_qps_inf</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"right\">360.361</td>"), std::string::npos);
  EXPECT_EQ(count_of(html, "<tr><td"), 12u);
  // A chart per kind with data: throughput, TTFT, TPOT, ITL, and the three latencies against
  // throughput that the results carry (no E2EL in seed 000's results).
  EXPECT_EQ(count_of(html, "<figure"), 7u);
  EXPECT_EQ(count_of(html, "<svg"), 7u);
  EXPECT_NE(html.find("<figure id=\"chart-ttft\">"), std::string::npos);
  EXPECT_EQ(html.find("chart-e2el"), std::string::npos);
  EXPECT_NE(html.find("<title>Mean ITL against request rate</title>"), std::string::npos);
  // The four load charts reach QPS inf by a dashed line and say so; the three against
  // throughput place inf at its achieved throughput.
  EXPECT_EQ(count_of(html, "<figcaption>Dashed: to the unlimited load"), 4u);
}

TEST(HtmlReport, SelfContainedWithUniqueIds) {
  const std::string html = seed000_html();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);  // inline SVG, not a document in a document
  // Every reference stays inside the page (SVG namespaces are names, not fetched).
  const std::regex external(R"((src|href)\s*=\s*"(?!#))");
  EXPECT_FALSE(std::regex_search(html, external));
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  // Cairo names glyphs alike in every SVG; the page must not repeat an id.
  const std::regex id(R"re(\sid="([^"]+)")re");
  std::set<std::string> ids;
  size_t total = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id); it != std::sregex_iterator();
       ++it) {
    ids.insert((*it)[1].str());
    ++total;
  }
  EXPECT_GT(total, 50u);
  EXPECT_EQ(ids.size(), total);
}

TEST(HtmlReport, ConcurrencySweepAddsTheConcurrencyTable) {
  const std::vector<CompareInput> inputs = {
      {"seed004_sweep", load_runs(testdata_path("seed004_sweep"))}};
  const std::string html = html_report(inputs, {}, ChartStat::kP99);
  EXPECT_NE(html.find("<dd>max concurrency</dd>"), std::string::npos);
  // One concurrency table per deployment, each headed by its series.
  const size_t dynamo_3p1d = html.find("<h3>dynamo_3p1d</h3>");
  const size_t dynamo_6p1d = html.find("<h3>dynamo_6p1d</h3>");
  ASSERT_NE(dynamo_3p1d, std::string::npos);
  ASSERT_NE(dynamo_6p1d, std::string::npos);
  EXPECT_EQ(count_of(html, "<h3>Benchmark Result (ISL:OSL=3000:150)</h3>"), 2u);
  EXPECT_NE(html.find("<th>Concurrency</th>"), std::string::npos);
  // 3P1D's mean E2E at concurrency 128 (19940.79 ms) in 3P1D's table, not in 6P1D's.
  const size_t cell = html.find("<td class=\"center\">19940.79</td>");
  EXPECT_GT(cell, dynamo_3p1d);
  EXPECT_LT(cell, dynamo_6p1d);
  // E2E is in these results: its charts are drawn, with the p99 asked for.
  EXPECT_NE(html.find("<title>P99 E2E latency against max concurrency</title>"), std::string::npos);
  EXPECT_NE(html.find("<figure id=\"chart-e2el-vs-throughput\">"), std::string::npos);
}

}  // namespace
}  // namespace servebench::report
