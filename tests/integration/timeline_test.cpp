// `servebench report --chart timeline` and the HTML report on a real run's result: the records
// beside it and the scraped series it keeps with --save-detailed become panels.
#include <gtest/gtest.h>

#include "harness.h"

namespace servebench::itest {
namespace {

TEST(ReportTimeline, FromARunsRecordsAndScrapes) {
  TempDir dir;
  Outcome o = run({"run",
                   "--num-prompts",
                   "60",
                   "--random-input-len",
                   "32",
                   "--random-output-len",
                   "16",
                   "--request-rate",
                   "40",
                   "--sim-ttft-ms",
                   "5",
                   "--sim-itl-ms",
                   "2",
                   "--server-metrics-interval",
                   "0.05",
                   "--save-result",
                   "--save-detailed",
                   "--result-dir",
                   dir.path(),
                   "--disable-tqdm"});
  ASSERT_EQ(o.exit_code, 0) << o.out << o.err;
  const std::string png = dir.path() + "/timeline.png";
  Outcome chart = run({"report", dir.path(), "--chart", "timeline", "--output", png});
  ASSERT_EQ(chart.exit_code, 0) << chart.out << chart.err;
  EXPECT_EQ(read_file(png).substr(1, 3), "PNG");
  Outcome html = run({"report", dir.path(), "--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find("<h2>Timelines</h2>"), std::string::npos);
  EXPECT_NE(html.out.find("id=\"timeline-sent\""), std::string::npos);
  EXPECT_NE(html.out.find("id=\"timeline-server-running\""), std::string::npos);
}

TEST(ReportTimeline, ResultsWithoutDetailSayWhy) {
  Outcome o = run({"report", std::string(SERVEBENCH_SOURCE_DIR) + "/src/report/testdata/ib",
                   "--chart", "timeline", "--output", "/tmp/servebench-never-written.png"});
  EXPECT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.err.find("no run has per-request records"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace servebench::itest
