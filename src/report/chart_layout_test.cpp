// The chart geometry (chart_layout.h): legend, title and y label on the page whatever the names.
#include "report/chart_layout.h"

#include <gtest/gtest.h>

namespace servebench::report {
namespace {

// A timeline panel as chart_render.cpp lays it out: 760 pt wide (268 mm), PLplot's default
// character height 6.02 mm, labels at 0.75 of it, the legend at 0.76.
ChartLayoutInput timeline_panel(std::vector<std::string> names, std::string title) {
  ChartLayoutInput in;
  in.page_width_mm = 268.1;
  in.label_height_mm = 0.75 * 6.02;
  in.title_height_mm = 1.25 * in.label_height_mm;
  in.legend_height_mm = 0.76 * 6.02;
  in.title = std::move(title);
  in.y_tick_chars = 6;
  in.names = std::move(names);
  return in;
}

double longest_mm(const std::vector<std::string>& names, double height) {
  double m = 0;
  for (const std::string& n : names) m = std::max(m, text_width_mm(n, height));
  return m;
}

TEST(ChartLayout, LongLegendNamesStayOnThePage) {
  std::vector<std::string> names;
  for (int i = 1; i <= 6; ++i) {
    names.push_back("openai-" + std::to_string(2 * i) +
                    ".0qps-servebench-sim-20261126-113113 stage_" + std::to_string(i) + " (" +
                    std::to_string(32 * i) + " qps) p99");
  }
  const ChartLayoutInput in = timeline_panel(names, "Requests sent per second");
  const ChartLayout l = chart_layout(in);
  ASSERT_EQ(l.names.size(), names.size());
  // The legend box, text included, ends inside the page, right of the plot.
  EXPECT_GT(l.legend_x0, l.plot_x1);
  const double text_end = l.legend_x0 + 0.06 * (l.plot_x1 - l.plot_x0) +
                          longest_mm(l.names, in.legend_height_mm) / in.page_width_mm;
  EXPECT_LE(text_end, l.legend_x1);
  EXPECT_LE(l.legend_x1, 1.0);
  // The plot keeps most of the page.
  EXPECT_GT(l.plot_x1 - l.plot_x0, 0.45);
  // Shortened names still differ.
  for (size_t i = 1; i < l.names.size(); ++i) EXPECT_NE(l.names[i], l.names[i - 1]);
}

TEST(ChartLayout, SharedStartIsShortenedFirst) {
  std::vector<std::string> names;
  for (int i = 1; i <= 6; ++i) {
    names.push_back("inference-perf-ib-deepseek-v2.5 stage_" + std::to_string(i) + " (" +
                    std::to_string(16 * i) + " qps)");
  }
  const ChartLayout l = chart_layout(timeline_panel(names, "Requests in flight"));
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string tail = names[i].substr(names[i].find("stage_"));
    EXPECT_NE(l.names[i].find(tail), std::string::npos) << l.names[i];
  }
  EXPECT_LE(l.legend_x1, 1.0);
}

TEST(ChartLayout, ShortNamesAreKeptWhole) {
  const ChartLayout l = chart_layout(timeline_panel({"tp8", "tp4_pp2"}, "TTFT"));
  EXPECT_EQ(l.names, (std::vector<std::string>{"tp8", "tp4_pp2"}));
  EXPECT_LE(l.legend_x1, 1.0);
}

TEST(ChartLayout, TitleWiderThanThePlotStaysOnThePage) {
  const ChartLayoutInput in = timeline_panel({"openai-4.0qps-servebench-sim-20261126-112854 p99"},
                                             "TTFT (by first token): p50 solid, p99 dashed");
  const ChartLayout l = chart_layout(in);
  EXPECT_GE(l.title_x0, 0.0);
  EXPECT_LE(l.title_x1, 1.0);
  const double width = text_width_mm(in.title, in.title_height_mm * l.title_scale);
  EXPECT_NEAR(l.title_x1 - l.title_x0, width / in.page_width_mm, 1e-9);
}

TEST(ChartLayout, LongSubtitleIsShrunkToThePage) {
  // A sweep chart alone on its page (1100 pt, 388 mm) naming many deployments.
  ChartLayoutInput in;
  in.page_width_mm = 388.0;
  in.label_height_mm = 6.14;
  in.title_height_mm = 1.25 * 6.14;
  in.legend_height_mm = 0.95 * 6.14;
  in.subtitle_height_mm = 0.8 * 6.14;
  in.title = "Output throughput against request rate";
  in.subtitle =
      "Deployment: inference-perf-ib stage_5 (10 qps), inference-perf-ib stage_1 (2 qps), "
      "inference-perf-ib stage_2 (4 qps) and 3 more · 60 prompts";
  in.names = {"m", "r"};
  const ChartLayout l = chart_layout(in);
  EXPECT_LT(l.subtitle_scale, 1.0);
  EXPECT_LE(text_width_mm(in.subtitle, in.subtitle_height_mm * l.subtitle_scale), in.page_width_mm);
  EXPECT_LE(l.legend_x1, 1.0);
}

TEST(ChartLayout, YLabelClearsSixDigitTicks) {
  const ChartLayoutInput in = timeline_panel({"run"}, "NVLink sent (DCGM, all GPUs)");
  const ChartLayout l = chart_layout(in);
  // The numbers, then the label (one character high, rotated) left of them, on the page.
  const double ticks_mm = text_width_mm("120000", in.label_height_mm);
  EXPECT_GT(l.y_label_offset * in.label_height_mm, ticks_mm);
  EXPECT_GE(l.plot_x0 * in.page_width_mm - (l.y_label_offset + 0.5) * in.label_height_mm, 0.0);
}

TEST(ChartLayout, ShortenMiddleKeepsBothEnds) {
  EXPECT_EQ(shorten_middle("abcdefghij", 20), "abcdefghij");
  const std::string s = shorten_middle("abcdefghijklmnopqrst", 11);
  EXPECT_EQ(s, "abcd…opqrst");  // 11 characters: 4, "…", 6
}

}  // namespace
}  // namespace servebench::report
