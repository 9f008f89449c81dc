// Charts: runs grouped into series, the load axis chosen and `inf` placed, and PNG, SVG and PDF
// files with the right shape, on seed 000's rate sweep and seed 004's concurrency sweep.
#include "report/charts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "core/error.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using namespace test_support;

// Seed 000: tp8_pp1, tp4_pp2_no_IB and tp4_pp2_IB at QPS 1, 4, 16 and inf, each result carrying
// --metadata deployment=<name>.
std::vector<CompareInput> seed000() {
  return {{"seed000", load_runs(testdata_path("seed000"))}};
}

// Seed 004: Dynamo 3P1D and 6P1D at concurrency 1 … 128 (ISL:OSL 3000:150).
std::vector<CompareInput> seed004() {
  return {{"seed004_sweep", load_runs(testdata_path("seed004_sweep"))}};
}

std::vector<std::string> names_of(const std::vector<Series>& series) {
  std::vector<std::string> names;
  for (const Series& s : series) names.push_back(s.name);
  return names;
}

TEST(NameWithoutLoad, DropsTheLoadPartOnly) {
  EXPECT_EQ(name_without_load("tp4_pp2_IB_qps_16"), "tp4_pp2_IB");
  EXPECT_EQ(name_without_load("tp8_pp1_qps_inf"), "tp8_pp1");
  EXPECT_EQ(name_without_load("serving_llama8B_tp1_sharegpt_qps_0.5"),
            "serving_llama8B_tp1_sharegpt");
  EXPECT_EQ(name_without_load("dynamo_3p1d_concurrency_008"), "dynamo_3p1d");
  EXPECT_EQ(name_without_load("vllm-rate-4"), "vllm");
  EXPECT_EQ(name_without_load("replicas_c8"), "replicas");
  EXPECT_EQ(name_without_load("plain_run"), "plain_run");
  EXPECT_EQ(name_without_load("qps_4"), "qps_4");  // nothing would be left
  EXPECT_EQ(name_without_load("benchmarks_constant@0.99"), "benchmarks");
  EXPECT_EQ(name_without_load("benchmarks_synchronous"), "benchmarks");
  EXPECT_EQ(name_without_load("noib_throughput"), "noib");
}

TEST(GroupSeries, AutoUsesTheDeploymentMetadata) {
  const auto inputs = seed000();
  const auto series = group_series(inputs, parse_series_rule("auto"));
  EXPECT_EQ(names_of(series), (std::vector<std::string>{"tp4_pp2_IB", "tp4_pp2_no_IB", "tp8_pp1"}));
  for (const Series& s : series) {
    ASSERT_EQ(s.runs.size(), 4u) << s.name;
    for (const RunResult* run : s.runs) EXPECT_EQ(run->result["deployment"], s.name);
  }
}

TEST(GroupSeries, ByNameStripsTheLoadSuffix) {
  const auto inputs = seed000();
  const auto series = group_series(inputs, parse_series_rule("name"));
  EXPECT_EQ(names_of(series), (std::vector<std::string>{"tp4_pp2_IB", "tp4_pp2_no_IB", "tp8_pp1"}));
  EXPECT_EQ(series[2].runs[3]->test_name, "tp8_pp1_qps_inf");
}

TEST(GroupSeries, AutoWithoutDeploymentGroupsByInput) {
  // The ib/ and no_ib/ suites name their runs alike (tp4_pp2_qps_01 …): the directory tells.
  const std::vector<CompareInput> inputs = {{"no_ib", load_runs(testdata_path("no_ib"))},
                                            {"ib", load_runs(testdata_path("ib"))}};
  const auto series = group_series(inputs, parse_series_rule("auto"));
  EXPECT_EQ(names_of(series), (std::vector<std::string>{"no_ib", "ib"}));
  EXPECT_EQ(series[0].runs.size(), 2u);
  EXPECT_EQ(series[1].runs.size(), 3u);
}

TEST(GroupSeries, AutoResolvesToOneRule) {
  const auto one_input =
      std::vector<CompareInput>{{"results", load_runs(testdata_path("results"))}};
  EXPECT_EQ(resolve_series_rule(one_input, {}).kind, SeriesRule::Kind::kName);
  const auto with_deployment = seed000();
  const SeriesRule rule = resolve_series_rule(with_deployment, {});
  EXPECT_EQ(rule.kind, SeriesRule::Kind::kKey);
  EXPECT_EQ(rule.key, "deployment");
  const SeriesRule input = parse_series_rule("input");
  EXPECT_EQ(resolve_series_rule(with_deployment, input).kind, SeriesRule::Kind::kInput);
}

// Three ISL:OSL sweeps of one deployment: one line per label, as the tables group them (one
// line per deployment would zig-zag through all three); both when both vary.
TEST(GroupSeries, AutoFollowsTheLabelsLikeTheTables) {
  auto run = [](const std::string& deployment, const std::string& label, int c) {
    nlohmann::json r = {{"deployment", deployment}, {"label", label}, {"max_concurrency", c}};
    return RunResult{label + ".json", "servebench", label, r};
  };
  std::vector<CompareInput> inputs = {{"sweeps", {}}};
  for (const char* label : {"3000:150", "1000:1000", "500:1000"}) {
    for (int c : {1, 8}) inputs[0].runs.push_back(run("dynamo-3p1d", label, c));
  }
  EXPECT_EQ(names_of(group_series(inputs, {})),
            (std::vector<std::string>{"3000:150", "1000:1000", "500:1000"}));
  for (const char* label : {"3000:150", "1000:1000", "500:1000"}) {
    inputs[0].runs.push_back(run("vllm-4xtp4", label, 1));
  }
  const auto both = group_series(inputs, {});
  ASSERT_EQ(both.size(), 6u);
  EXPECT_EQ(both[0].name, "dynamo-3p1d · 3000:150");
  EXPECT_EQ(both[5].name, "vllm-4xtp4 · 500:1000");
}

TEST(GroupSeries, ByAResultKeyAndMissingKeys) {
  const std::vector<CompareInput> inputs = {{"results", load_runs(testdata_path("results"))},
                                            {"seed000", seed000()[0].runs}};
  const auto series = group_series(inputs, parse_series_rule("deployment"));
  // The results/ runs carry no deployment: they share the series "n/a".
  EXPECT_EQ(names_of(series),
            (std::vector<std::string>{"n/a", "tp4_pp2_IB", "tp4_pp2_no_IB", "tp8_pp1"}));
  EXPECT_EQ(series[0].runs.size(), 2u);
  EXPECT_THROW(parse_series_rule(""), core::Error);
}

TEST(LoadAxis, RateForARateSweepConcurrencyForAConcurrencySweep) {
  const auto rate_inputs = seed000();
  EXPECT_EQ(choose_load_axis(group_series(rate_inputs, {})), LoadAxis::kRequestRate);
  const auto concurrency_inputs = seed004();
  EXPECT_EQ(choose_load_axis(group_series(concurrency_inputs, {})), LoadAxis::kMaxConcurrency);
  const RunResult& inf_run = rate_inputs[0].runs[3];
  ASSERT_EQ(inf_run.test_name, "tp4_pp2_IB_qps_inf");
  EXPECT_TRUE(std::isinf(load_of(inf_run, LoadAxis::kRequestRate)));
  EXPECT_TRUE(std::isinf(load_of(inf_run, LoadAxis::kMaxConcurrency)));  // null: no limit
  EXPECT_EQ(load_of(concurrency_inputs[0].runs[2], LoadAxis::kMaxConcurrency), 4);
}

TEST(ChartData, TtftAgainstRateOnALogScaleWithInfOneStepRight) {
  const auto inputs = seed000();
  const auto series = group_series(inputs, {});
  const ChartData chart =
      chart_data(series, parse_chart_kind("ttft"), ChartStat::kMean, LoadAxis::kRequestRate);
  EXPECT_EQ(chart.slug, "ttft");
  EXPECT_EQ(chart.title, "Mean TTFT against request rate");
  EXPECT_EQ(chart.x_label, "Request rate (req/s)");
  EXPECT_EQ(chart.y_label, "Mean TTFT (ms)");
  // 1, 4, 16 span 16x: log scale, evenly spaced at log10(4) apart; inf one more step.
  const double step = std::log10(4.0);
  ASSERT_EQ(chart.x_ticks.size(), 4u);
  const std::vector<std::string> tick_texts = {"1", "4", "16", "inf"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(chart.x_ticks[i].text, tick_texts[i]);
    EXPECT_NEAR(chart.x_ticks[i].x, step * static_cast<double>(i), 1e-9);
  }
  ASSERT_EQ(chart.lines.size(), 3u);
  const ChartLine& tp8 = chart.lines[2];
  EXPECT_EQ(tp8.name, "tp8_pp1");
  ASSERT_EQ(tp8.points.size(), 4u);
  // Seed 000's cumulative table: mean TTFT 65.2578, 50.3255, 59.5779, 360.361 ms.
  EXPECT_DOUBLE_EQ(tp8.points[0].y, 65.2578);
  EXPECT_DOUBLE_EQ(tp8.points[3].y, 360.361);
  EXPECT_FALSE(tp8.points[2].off_scale);
  EXPECT_TRUE(tp8.points[3].off_scale);
  EXPECT_NEAR(tp8.points[3].x, 3 * step, 1e-9);
  EXPECT_LT(chart.x_min, 0);
  EXPECT_GT(chart.x_max, 3 * step);
}

TEST(ChartData, LatencyAgainstThroughputFollowsTheLoadOrder) {
  const auto inputs = seed000();
  const auto series = group_series(inputs, {});
  const ChartData chart = chart_data(series, parse_chart_kind("tpot-vs-throughput"),
                                     ChartStat::kP99, LoadAxis::kRequestRate);
  EXPECT_EQ(chart.x_label, "Output throughput (tok/s)");
  EXPECT_EQ(chart.y_label, "P99 TPOT (ms)");
  EXPECT_EQ(chart.title, "P99 TPOT against output throughput");
  EXPECT_TRUE(chart.x_ticks.empty());  // a numeric axis PLplot ticks itself
  const ChartLine& no_ib = chart.lines[1];
  EXPECT_EQ(no_ib.name, "tp4_pp2_no_IB");
  ASSERT_EQ(no_ib.points.size(), 4u);
  // QPS 1, 4, 16, inf: output throughput 197.96, 540.122, 800.41, 910.144 tok/s.
  EXPECT_DOUBLE_EQ(no_ib.points[0].x, 197.96);
  EXPECT_DOUBLE_EQ(no_ib.points[3].x, 910.144);
  EXPECT_DOUBLE_EQ(no_ib.points[3].y, 211.605);
  EXPECT_FALSE(no_ib.points[3].off_scale);         // inf's achieved throughput is a real x
  EXPECT_NEAR(chart.x_max, 1780.36 * 1.08, 1e-9);  // the fastest: tp8_pp1 at inf, 1780.36 tok/s
  EXPECT_NEAR(chart.x_min, -0.02 * chart.x_max, 1e-9);  // a point at ~0 stays in view
  // Each point says which load it is.
  EXPECT_EQ(no_ib.point_labels, (std::vector<std::string>{"@1", "@4", "@16", "@inf"}));
  EXPECT_NE(chart.subtitle.find("prompts"), std::string::npos) << chart.subtitle;
}

TEST(ChartData, ConcurrencySweepTicksEveryConcurrency) {
  const auto inputs = seed004();
  const auto series = group_series(inputs, {});
  ASSERT_EQ(names_of(series), (std::vector<std::string>{"dynamo_3p1d", "dynamo_6p1d"}));
  const ChartData chart =
      chart_data(series, parse_chart_kind("e2el"), ChartStat::kMean, LoadAxis::kMaxConcurrency);
  EXPECT_EQ(chart.title, "Mean E2E latency against max concurrency");
  EXPECT_EQ(chart.x_label, "Max concurrency (requests)");
  std::vector<std::string> ticks;
  for (const ChartTick& t : chart.x_ticks) ticks.push_back(t.text);
  EXPECT_EQ(ticks, (std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64", "128"}));
  ASSERT_EQ(chart.lines[0].points.size(), 8u);
  EXPECT_DOUBLE_EQ(chart.lines[0].points[7].y, 19940.79);  // 3P1D at 128, seed 004
  EXPECT_NEAR(chart.lines[0].points[7].x, std::log10(128.0), 1e-9);
}

TEST(ChartData, AFigureNoRunCarriesGivesNoLines) {
  // vLLM writes E2EL only with --percentile-metrics e2el; seed 000's results have none and no
  // latencies array to derive it from.
  const auto inputs = seed000();
  const ChartData chart = chart_data(group_series(inputs, {}), parse_chart_kind("e2el"),
                                     ChartStat::kMean, LoadAxis::kRequestRate);
  EXPECT_TRUE(chart.lines.empty());
  EXPECT_EQ(chart.y_key, "mean_e2el_ms");
  const ChartData charts[] = {chart};
  try {
    render_charts(charts, ImageFormat::kPng);
    ADD_FAILURE() << "a chart without points was drawn";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("e2el: no result carries mean_e2el_ms"), std::string::npos)
        << e.what();
  }
}

TEST(ChartKinds, NamesParseAndBadOnesAreRefused) {
  for (const std::string& name : chart_kind_names()) {
    EXPECT_NO_THROW(parse_chart_kind(name)) << name;
  }
  EXPECT_EQ(chart_kind_names().size(), 9u);
  EXPECT_THROW(parse_chart_kind("latency"), core::Error);
  EXPECT_THROW(parse_chart_stat("p50"), core::Error);
  EXPECT_THROW(parse_image_format("jpg"), core::Error);
  EXPECT_EQ(parse_image_format("svg"), ImageFormat::kSvg);
}

ChartData ttft_chart() {
  static const auto inputs = seed000();
  return chart_data(group_series(inputs, {}), parse_chart_kind("ttft"), ChartStat::kMean,
                    LoadAxis::kRequestRate);
}

uint32_t big_endian32(const std::string& bytes, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
  return v;
}

TEST(RenderCharts, PngHasTheSignatureAndPageSize) {
  const ChartData charts[] = {ttft_chart()};
  const std::string png = render_charts(charts, ImageFormat::kPng);
  ASSERT_GT(png.size(), 5000u);  // a blank 1100x640 PNG compresses to far less
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian32(png, 16), 1100u);
  EXPECT_EQ(big_endian32(png, 20), 640u);
}

TEST(RenderCharts, SvgNamesTheChartItsAxesAndSeries) {
  const ChartData charts[] = {ttft_chart()};
  const std::string svg = render_charts(charts, ImageFormat::kSvg);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("<title>Mean TTFT against request rate</title>"), std::string::npos);
  EXPECT_NE(svg.find("<desc>x: Request rate (req/s); y: Mean TTFT (ms); series: tp4_pp2_IB, "
                     "tp4_pp2_no_IB, tp8_pp1</desc>"),
            std::string::npos);
  // Cairo draws text as glyphs: the labels are there when glyphs are used.
  EXPECT_NE(svg.find("<use xlink:href=\"#glyph"), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 1100 640\""), std::string::npos);
}

TEST(RenderCharts, PdfHasOnePagePerChart) {
  const auto inputs = seed000();
  const auto series = group_series(inputs, {});
  std::vector<ChartData> charts;
  for (const char* kind : {"throughput", "ttft", "tpot"}) {
    charts.push_back(
        chart_data(series, parse_chart_kind(kind), ChartStat::kMean, LoadAxis::kRequestRate));
  }
  const std::string pdf = render_charts(charts, ImageFormat::kPdf);
  EXPECT_EQ(pdf.rfind("%PDF-", 0), 0u);
  EXPECT_NE(pdf.find("%%EOF", pdf.size() - 16), std::string::npos);
  const std::regex page(R"(/Type\s*/Page[^s])");
  const auto pages =
      std::distance(std::sregex_iterator(pdf.begin(), pdf.end(), page), std::sregex_iterator());
  EXPECT_EQ(pages, 3);
  // PNG and SVG hold one chart each.
  EXPECT_THROW(render_charts(charts, ImageFormat::kPng), core::Error);
}

}  // namespace
}  // namespace servebench::report
