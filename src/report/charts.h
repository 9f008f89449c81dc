// File: report/charts.h
// Charts of finished results, as seed 000's comparison of single-node and distributed
// deployments: one line per series (a deployment or a run of a sweep), latency (TTFT, TPOT, ITL,
// E2E) or output throughput against load, or latency against output throughput. Drawn with
// PLplot's cairo drivers as PNG, SVG or PDF; the HTML report puts the SVGs beside the seed tables.
// Series grouping, the load axis and `inf` are described in docs/reports.md.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "report/tables.h"

namespace servebench::report {

// How runs are grouped into series, one line each: by the result key `key` (a `--metadata`
// key such as "deployment", or vLLM's "label"), by input argument, or by test name less its
// load suffix ("tp4_pp2_IB_qps_16" -> "tp4_pp2_IB"). kAuto: "label" when every run has one
// (as the tables group), unless "deployment" tells more runs apart; both ("deployment+label",
// a series "dep · label") when both vary otherwise; "deployment" when every run has it; else by
// input when there are several, else by name.
struct SeriesRule {
  enum class Kind { kAuto, kInput, kName, kKey };
  Kind kind = Kind::kAuto;
  std::string key;  // kKey only
};
// "auto", "input", "name", or any other word: that result key. Throws core::Error (kUsage).
SeriesRule parse_series_rule(const std::string& text);

struct Series {
  std::string name;
  std::vector<const RunResult*> runs;  // in input order; point into the inputs
};
// kAuto made definite for these inputs; any other rule as it is.
SeriesRule resolve_series_rule(std::span<const CompareInput> inputs, const SeriesRule& rule);
// Series in order of first appearance. A run without the rule's key goes to series "n/a".
std::vector<Series> group_series(std::span<const CompareInput> inputs, const SeriesRule& rule);
// The test name without a trailing load part ("_qps_16", "-rate-inf", "_concurrency_8", "_c8").
std::string name_without_load(const std::string& test_name);

// The load axis is whichever of request rate and max concurrency varies across the runs (rate
// when both or neither do). An unlimited load (rate inf, no concurrency limit) is +infinity.
enum class LoadAxis { kRequestRate, kMaxConcurrency };
LoadAxis choose_load_axis(std::span<const Series> series);
double load_of(const RunResult& run, LoadAxis axis);

enum class ChartMetric { kTtft, kTpot, kItl, kE2el, kOutputThroughput };
enum class ChartX { kLoad, kOutputThroughput };
enum class ChartStat { kMean, kMedian, kP99 };
struct ChartKind {
  ChartMetric metric = ChartMetric::kTtft;
  ChartX x = ChartX::kLoad;
  bool operator==(const ChartKind&) const = default;
};
// "ttft", "tpot", "itl", "e2el", "throughput" (against load) and "ttft-vs-throughput", …,
// "e2el-vs-throughput" (against output throughput); the order the HTML report shows them in.
std::vector<std::string> chart_kind_names();
ChartKind parse_chart_kind(const std::string& name);  // throws core::Error (kUsage)
ChartStat parse_chart_stat(const std::string& name);  // "mean", "median", "p99"
const char* chart_stat_name(ChartStat stat);

// What one chart shows, ready to draw: points in plot coordinates. On a load axis, loads are
// placed on a log scale when they span 4x or more; an unlimited load sits one step right of the
// largest finite one, ticked "inf" (rate; "throughput" for a GuideLLM-style throughput
// benchmark) or "unlimited" (concurrency), joined by a dashed line; on a rate axis a synchronous
// run (one request at a time) sits one step left of the smallest, ticked "sync". Ticks carry at
// most three significant digits and are thinned where they would overlap. On a throughput axis
// each point is labelled with its load ("@16", "sync", "c=8").
struct ChartPoint {
  double x = 0, y = 0;
  bool off_scale = false;  // an unlimited load placed past the largest: reached by a dashed line
};
struct ChartLine {
  std::string name;
  std::vector<ChartPoint> points;  // by load, then input order
  // Drawn beside each point (empty: none): its load, on a throughput axis ("@16", "sync").
  std::vector<std::string> point_labels;
  // Timelines draw hundreds of points: no markers; a second statistic of a run (p99 beside
  // p50) dashed in the run's colour; a NaN y is a gap (a window without samples).
  bool markers = true;
  bool dashed = false;
  int color = -1;  // the palette entry; -1: the line's position in the chart
};
struct ChartTick {
  double x = 0;
  std::string text;
};
struct ChartData {
  std::string slug;  // the kind's name, e.g. "ttft" or "tpot-vs-throughput"
  std::string title, x_label, y_label;
  std::string subtitle;            // what the runs are: model, deployments, prompts
  std::string y_key;               // the result key plotted, e.g. "mean_ttft_ms"
  std::vector<ChartLine> lines;    // runs without the figure are left out; empty lines dropped
  std::vector<ChartTick> x_ticks;  // empty: the axis is numeric, ticked by PLplot
  double x_min = 0, x_max = 1;
};
ChartData chart_data(std::span<const Series> series, ChartKind kind, ChartStat stat, LoadAxis axis);

// Draws charts with PLplot's cairo drivers and returns the file's bytes. PDF: one page per
// chart; PNG and SVG take exactly one chart. Throws core::Error when a chart has no points or
// the cairo driver is not installed (plplot-driver-cairo).
enum class ImageFormat { kPng, kSvg, kPdf };
std::string render_charts(std::span<const ChartData> charts, ImageFormat format);
ImageFormat parse_image_format(const std::string& name);  // "png", "svg", "pdf"
const char* image_extension(ImageFormat format);          // "png", "svg", "pdf"

// Timelines (timeline.cpp): a run's quantities over time, one panel per quantity, every run a
// line of its own colour, x in seconds since the run's start, in windows of 1 s (shorter for a
// run under 20 s, longer past 20 minutes; or `window_s`). Client panels (requests sent,
// completed, failed, output tokens/s, in flight, TTFT and ITL p50/p99) come from the run's
// per-request records: the records JSONL its result names (`servebench.records_file`, or
// `<result stem>.records.jsonl` beside it), else the result's --save-detailed arrays (vLLM's
// too). Server panels (running, waiting, KV cache, prompt and generation tokens/s, preemptions,
// DCGM GPU and node_exporter network series) come from the scraped series a servebench result
// keeps with --save-detailed (`servebench.server_metrics`, each series' `timeseries`). A panel
// no run has data for (or only zeros) is left out. Throws core::Error for a malformed records
// file or series, naming it.
std::vector<ChartData> timeline_panels(std::span<const CompareInput> inputs, double window_s = 0);
// The panels on one page, two a row (a dashboard). Throws core::Error when there are none.
std::string render_timeline(std::span<const ChartData> panels, ImageFormat format);

// One self-contained HTML page: a header with the runs' metadata, the seed tables (vLLM's
// serving table; the concurrency table on a concurrency sweep), every chart kind with data and
// the timeline panels as inline SVG. No scripts, no external resources.
std::string html_report(std::span<const CompareInput> inputs, const SeriesRule& rule,
                        ChartStat stat);

}  // namespace servebench::report
