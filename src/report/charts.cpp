// Charts of results: runs grouped into series, figures placed on a load or throughput axis, and
// drawn with PLplot's cairo drivers (pngcairo, svgcairo, pdfcairo). docs/reports.md describes
// the choices (series, the load axis, where `inf` goes).
#include "report/charts.h"

#include <plplot.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "report/markup.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

// The row of a name table (kinds, statistics, formats) whose `field` equals `value`, or null.
template <typename Row, size_t N, typename Field, typename Value>
const Row* find_row(const Row (&rows)[N], Field Row::*field, const Value& value) {
  for (const Row& row : rows) {
    if (row.*field == value) return &row;
  }
  return nullptr;
}

// The series a run belongs to under a result key: strings as they are, numbers as Python prints
// them (a `--metadata tp=4` is stored as a string, a vLLM key like max_concurrency as a number).
std::optional<std::string> key_text(const RunResult& run, const std::string& key) {
  const auto it = run.result.find(key);
  if (it == run.result.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return text::python_g(it->get<double>());
  if (it->is_boolean()) return it->get<bool>() ? "True" : "False";
  return std::nullopt;
}

}  // namespace

SeriesRule parse_series_rule(const std::string& text) {
  if (text.empty()) usage("--series-by", "is empty; one of auto, input, name, or a result key");
  if (text == "auto") return {SeriesRule::Kind::kAuto, ""};
  if (text == "input") return {SeriesRule::Kind::kInput, ""};
  if (text == "name") return {SeriesRule::Kind::kName, ""};
  return {SeriesRule::Kind::kKey, text};
}

std::string name_without_load(const std::string& test_name) {
  static const std::regex kLoadSuffix(
      R"(^(.+?)[_-](qps|rate|concurrency|conc|c)[_-]?([0-9]+(\.[0-9]+)?|inf)$)", std::regex::icase);
  std::smatch m;
  if (std::regex_match(test_name, m, kLoadSuffix)) return m[1].str();
  return test_name;
}

SeriesRule resolve_series_rule(std::span<const CompareInput> inputs, const SeriesRule& rule) {
  if (rule.kind != SeriesRule::Kind::kAuto) return rule;
  bool every_run_has_deployment = true;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      every_run_has_deployment = every_run_has_deployment && key_text(run, "deployment");
    }
  }
  if (every_run_has_deployment) return {SeriesRule::Kind::kKey, "deployment"};
  return {inputs.size() > 1 ? SeriesRule::Kind::kInput : SeriesRule::Kind::kName, ""};
}

std::vector<Series> group_series(std::span<const CompareInput> inputs, const SeriesRule& rule) {
  const SeriesRule effective = resolve_series_rule(inputs, rule);
  std::vector<Series> out;
  std::map<std::string, size_t> index_of;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      std::string name;
      switch (effective.kind) {
        case SeriesRule::Kind::kInput:
          name = input.name;
          break;
        case SeriesRule::Kind::kName:
          name = name_without_load(run.test_name);
          break;
        default:
          name = key_text(run, effective.key).value_or("n/a");
      }
      const auto [it, added] = index_of.emplace(name, out.size());
      if (added) out.push_back({name, {}});
      out[it->second].runs.push_back(&run);
    }
  }
  return out;
}

double load_of(const RunResult& run, LoadAxis axis) {
  if (axis == LoadAxis::kRequestRate) return figure(run, "request_rate").value_or(kUnlimited);
  // vLLM writes null for no --max-concurrency; servebench writes null too (result_json.cpp).
  const double c = figure(run, "max_concurrency").value_or(kUnlimited);
  return c > 0 ? c : kUnlimited;
}

LoadAxis choose_load_axis(std::span<const Series> series) {
  std::set<double> rates, concurrencies;
  for (const Series& s : series) {
    for (const RunResult* run : s.runs) {
      rates.insert(load_of(*run, LoadAxis::kRequestRate));
      concurrencies.insert(load_of(*run, LoadAxis::kMaxConcurrency));
    }
  }
  return concurrencies.size() > rates.size() ? LoadAxis::kMaxConcurrency : LoadAxis::kRequestRate;
}

namespace {

struct KindName {
  const char* name;
  ChartKind kind;
};
constexpr KindName kKinds[] = {
    {"throughput", {ChartMetric::kOutputThroughput, ChartX::kLoad}},
    {"ttft", {ChartMetric::kTtft, ChartX::kLoad}},
    {"tpot", {ChartMetric::kTpot, ChartX::kLoad}},
    {"itl", {ChartMetric::kItl, ChartX::kLoad}},
    {"e2el", {ChartMetric::kE2el, ChartX::kLoad}},
    {"ttft-vs-throughput", {ChartMetric::kTtft, ChartX::kOutputThroughput}},
    {"tpot-vs-throughput", {ChartMetric::kTpot, ChartX::kOutputThroughput}},
    {"itl-vs-throughput", {ChartMetric::kItl, ChartX::kOutputThroughput}},
    {"e2el-vs-throughput", {ChartMetric::kE2el, ChartX::kOutputThroughput}},
};

std::string kind_slug(ChartKind kind) {
  const KindName* row = find_row(kKinds, &KindName::kind, kind);
  return row ? row->name : "chart";
}

struct StatName {
  ChartStat stat;
  const char* word;   // in vLLM's keys and on the command line
  const char* title;  // in axis titles
};
constexpr StatName kStats[] = {{ChartStat::kMean, "mean", "Mean"},
                               {ChartStat::kMedian, "median", "Median"},
                               {ChartStat::kP99, "p99", "P99"}};

const StatName& stat_name(ChartStat stat) {
  const StatName* row = find_row(kStats, &StatName::stat, stat);
  return row ? *row : kStats[0];
}

struct MetricNames {
  const char* key;    // vLLM's key stem: "{stat}_{key}_ms"
  const char* label;  // in axis titles
};
MetricNames metric_names(ChartMetric metric) {
  switch (metric) {
    case ChartMetric::kTpot:
      return {"tpot", "TPOT"};
    case ChartMetric::kItl:
      return {"itl", "ITL"};
    case ChartMetric::kE2el:
      return {"e2el", "E2E latency"};
    default:
      return {"ttft", "TTFT"};
  }
}

constexpr const char* kThroughputLabel = "Output throughput (tok/s)";

std::string load_label(LoadAxis axis) {
  return axis == LoadAxis::kRequestRate ? "Request rate (req/s)" : "Max concurrency (requests)";
}

std::string load_text(double load, LoadAxis axis) {
  if (std::isinf(load)) return axis == LoadAxis::kRequestRate ? "inf" : "unlimited";
  return text::python_g(load);
}

// Where loads go on the x axis: a log scale when they span 4x or more (sweeps double or
// quadruple the load), linear otherwise; unlimited one step beyond the largest finite load.
struct LoadScale {
  bool log = false;
  double unlimited_x = 0;
  double x(double load) const {
    if (std::isinf(load)) return unlimited_x;
    return log ? std::log10(load) : load;
  }
};

LoadScale load_scale(const std::set<double>& finite_loads) {
  LoadScale scale;
  if (finite_loads.empty()) return scale;
  const double lo = *finite_loads.begin();
  const double hi = *finite_loads.rbegin();
  scale.log = lo > 0 && hi / lo >= 4;
  const double x_lo = scale.x(lo);
  const double x_hi = scale.x(hi);
  double step = 0;
  if (finite_loads.size() >= 2) {
    step = (x_hi - x_lo) / static_cast<double>(finite_loads.size() - 1);
  } else {
    step = scale.log ? std::log10(2.0) : std::max(1.0, std::fabs(hi));
  }
  scale.unlimited_x = x_hi + step;
  return scale;
}

}  // namespace

std::vector<std::string> chart_kind_names() {
  std::vector<std::string> names;
  for (const KindName& k : kKinds) names.emplace_back(k.name);
  return names;
}

ChartKind parse_chart_kind(const std::string& name) {
  if (const KindName* row = find_row(kKinds, &KindName::name, name)) return row->kind;
  std::string all;
  for (const KindName& k : kKinds) all += std::string(all.empty() ? "" : ", ") + k.name;
  usage("--chart", "'" + name + "' is not a chart; one of: all, " + all);
}

ChartStat parse_chart_stat(const std::string& name) {
  if (const StatName* row = find_row(kStats, &StatName::word, name)) return row->stat;
  usage("--stat", "'" + name + "' is not one of mean, median, p99");
}

const char* chart_stat_name(ChartStat stat) {
  return stat_name(stat).word;
}

ChartData chart_data(std::span<const Series> series, ChartKind kind, ChartStat stat,
                     LoadAxis axis) {
  ChartData chart;
  chart.slug = kind_slug(kind);
  std::string& y_key = chart.y_key;
  if (kind.metric == ChartMetric::kOutputThroughput) {
    y_key = "output_throughput";
    chart.y_label = kThroughputLabel;
  } else {
    const MetricNames names = metric_names(kind.metric);
    y_key = fmt::format("{}_{}_ms", stat_name(stat).word, names.key);
    chart.y_label = fmt::format("{} {} (ms)", stat_name(stat).title, names.label);
  }
  const std::string y_what = chart.y_label.substr(0, chart.y_label.find(" ("));
  if (kind.x == ChartX::kLoad) {
    chart.x_label = load_label(axis);
    chart.title = fmt::format("{} against {}", y_what,
                              axis == LoadAxis::kRequestRate ? "request rate" : "max concurrency");
  } else {
    chart.x_label = kThroughputLabel;
    chart.title = fmt::format("{} against output throughput", y_what);
  }

  // Points as (load, x, y); x is the load itself until the scale is known.
  struct Raw {
    double load, x, y;
  };
  std::vector<std::vector<Raw>> raw(series.size());
  std::set<double> finite_loads;
  for (size_t i = 0; i < series.size(); ++i) {
    for (const RunResult* run : series[i].runs) {
      const auto y = figure(*run, y_key);
      const double load = load_of(*run, axis);
      std::optional<double> x = load;
      if (kind.x == ChartX::kOutputThroughput) x = figure(*run, "output_throughput");
      if (!y || !x || !std::isfinite(*y) || std::isnan(*x)) continue;
      if (kind.x == ChartX::kOutputThroughput && !std::isfinite(*x)) continue;
      raw[i].push_back({load, *x, *y});
      if (std::isfinite(load)) finite_loads.insert(load);
    }
    std::stable_sort(raw[i].begin(), raw[i].end(),
                     [](const Raw& a, const Raw& b) { return a.load < b.load; });
  }

  double x_lo = kUnlimited, x_hi = -kUnlimited;
  bool any_unlimited = false;
  const LoadScale scale = load_scale(finite_loads);
  for (size_t i = 0; i < series.size(); ++i) {
    if (raw[i].empty()) continue;
    ChartLine line{series[i].name, {}};
    for (const Raw& r : raw[i]) {
      const double x = kind.x == ChartX::kLoad ? scale.x(r.load) : r.x;
      const bool off_scale = kind.x == ChartX::kLoad && std::isinf(r.load);
      line.points.push_back({x, r.y, off_scale});
      any_unlimited = any_unlimited || off_scale;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
    }
    chart.lines.push_back(std::move(line));
  }
  if (chart.lines.empty()) return chart;

  if (kind.x == ChartX::kLoad) {
    // A tick at every load measured (thinned past a dozen), so the axis reads like the table.
    std::vector<double> loads(finite_loads.begin(), finite_loads.end());
    const size_t every = (loads.size() + 11) / 12;
    for (size_t i = 0; i < loads.size(); ++i) {
      if (i % every == 0 || i + 1 == loads.size()) {
        chart.x_ticks.push_back({scale.x(loads[i]), load_text(loads[i], axis)});
      }
    }
    if (any_unlimited) {
      chart.x_ticks.push_back({scale.unlimited_x, load_text(kUnlimited, axis)});
    }
    const double span = x_hi > x_lo ? x_hi - x_lo : 1.0;
    chart.x_min = x_lo - 0.05 * span;
    chart.x_max = x_hi + 0.05 * span;
  } else {
    chart.x_min = 0;
    chart.x_max = x_hi > 0 ? x_hi * 1.08 : 1.0;
  }
  return chart;
}

// ---- drawing ----

namespace {

// PLplot keeps its state in globals: one chart at a time.
std::mutex plplot_mutex;

// Color map 0: background, ink, grid, then the series (matplotlib's tab10, told apart in print
// by their markers too).
constexpr int kInk = 1, kGrid = 2, kFirstSeries = 3;
constexpr unsigned char kSeriesColors[][3] = {
    {31, 119, 180}, {255, 127, 14},  {44, 160, 44},   {214, 39, 40},  {148, 103, 189},
    {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr size_t kSeriesColorCount = sizeof(kSeriesColors) / sizeof(kSeriesColors[0]);
// The legend shows each series' marker as a glyph; the plot draws the same shape as a polygon,
// so that its centre sits exactly on the point (a glyph's centre depends on the font).
const char* const kMarkers[] = {"●", "■", "▲", "◆", "▼", "★", "◀", "▶"};
constexpr size_t kMarkerCount = sizeof(kMarkers) / sizeof(kMarkers[0]);

// The outline of marker `shape` (an index into kMarkers), around (0, 0), radius about 1.
std::vector<std::pair<double, double>> marker_outline(size_t shape) {
  const double kPi = std::acos(-1.0);
  auto star = [&](int corners, double outer, double inner, double turn) {
    std::vector<std::pair<double, double>> out;
    const int n = inner > 0 ? 2 * corners : corners;
    for (int i = 0; i < n; ++i) {
      const double r = inner > 0 && i % 2 == 1 ? inner : outer;
      const double a = turn + 2 * kPi * i / n;
      out.emplace_back(r * std::cos(a), r * std::sin(a));
    }
    return out;
  };
  switch (shape) {
    case 1:  // square
      return {{-0.85, -0.85}, {0.85, -0.85}, {0.85, 0.85}, {-0.85, 0.85}};
    case 2:  // triangle up
      return star(3, 1.2, 0, kPi / 2);
    case 3:  // diamond
      return star(4, 1.15, 0, 0);
    case 4:  // triangle down
      return star(3, 1.2, 0, -kPi / 2);
    case 5:  // star
      return star(5, 1.3, 0.55, kPi / 2);
    case 6:  // triangle left
      return star(3, 1.2, 0, kPi);
    case 7:  // triangle right
      return star(3, 1.2, 0, 0);
    default:  // circle
      return star(24, 1.0, 0, 0);
  }
}

// Filled markers of one size on the page whatever the axes' scales.
void draw_markers(const ChartLine& line, size_t shape, double x_span, double y_span) {
  double page_x0 = 0, page_x1 = 0, page_y0 = 0, page_y1 = 0;  // mm
  double vp_x0 = 0, vp_x1 = 0, vp_y0 = 0, vp_y1 = 0;          // fractions of the page
  plgspa(&page_x0, &page_x1, &page_y0, &page_y1);
  plgvpd(&vp_x0, &vp_x1, &vp_y0, &vp_y1);
  const double radius_mm = 0.0072 * (page_x1 - page_x0);
  const double rx = radius_mm * x_span / ((page_x1 - page_x0) * (vp_x1 - vp_x0));
  const double ry = radius_mm * y_span / ((page_y1 - page_y0) * (vp_y1 - vp_y0));
  const auto outline = marker_outline(shape);
  std::vector<double> xs(outline.size()), ys(outline.size());
  for (const ChartPoint& p : line.points) {
    for (size_t k = 0; k < outline.size(); ++k) {
      xs[k] = p.x + rx * outline[k].first;
      ys[k] = p.y + ry * outline[k].second;
    }
    plfill(static_cast<int>(xs.size()), xs.data(), ys.data());
  }
}

constexpr int kPageWidth = 1100, kPageHeight = 640;  // pixels (PNG) or points (SVG, PDF)

struct FormatName {
  ImageFormat format;
  const char* extension;
  const char* device;  // PLplot's cairo driver for it
};
constexpr FormatName kFormats[] = {{ImageFormat::kPng, "png", "pngcairo"},
                                   {ImageFormat::kSvg, "svg", "svgcairo"},
                                   {ImageFormat::kPdf, "pdf", "pdfcairo"}};

const FormatName& format_name(ImageFormat format) {
  const FormatName* row = find_row(kFormats, &FormatName::format, format);
  return row ? *row : kFormats[0];
}

// Without the driver plinit would ask on stdin for another device; refuse first instead.
void require_device(const char* device) {
  const int kMaxDevices = 128;
  std::vector<const char*> menus(kMaxDevices), names(kMaxDevices);
  const char** menu_ptr = menus.data();
  const char** name_ptr = names.data();
  int count = kMaxDevices;
  plgDevs(&menu_ptr, &name_ptr, &count);
  for (int i = 0; i < count; ++i) {
    if (std::string(name_ptr[i]) == device) return;
  }
  throw core::Error(core::ErrorKind::kInput, device,
                    "PLplot has no such output driver (install plplot-driver-cairo)");
}

// '#' starts PLplot's text escapes; a literal one is "##".
std::string plplot_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

void draw_chart(const ChartData& chart) {
  double y_max = 0;
  size_t longest_name = 0;
  for (const ChartLine& line : chart.lines) {
    for (const ChartPoint& p : line.points) y_max = std::max(y_max, p.y);
    longest_name = std::max(longest_name, line.name.size());
  }
  y_max = y_max > 0 ? y_max * 1.1 : 1.0;
  // The y label clears the widest tick number (PLplot writes up to six digits plainly).
  const double y_digits = std::floor(std::log10(std::max(y_max, 1.0))) + 1;
  const double y_label_offset = 1.6 + 0.8 * y_digits;
  // The legend sits right of the plot; the plot gives up what the longest name needs.
  const double legend_width = std::min(0.4, 0.1 + 0.0125 * static_cast<double>(longest_name));

  pladv(0);
  plschr(0, 1.0);
  plvpor(0.1, 0.97 - legend_width, 0.12, 0.9);
  plwind(chart.x_min, chart.x_max, 0, y_max);

  // Grid under everything, in light grey.
  plcol0(kGrid);
  plwidth(1);
  if (!chart.x_ticks.empty()) {
    for (const ChartTick& t : chart.x_ticks) pljoin(t.x, 0, t.x, y_max);
    plbox("", 0, 0, "g", 0, 0);
  } else {
    plbox("g", 0, 0, "g", 0, 0);
  }

  plcol0(kInk);
  if (!chart.x_ticks.empty()) {
    plbox("bc", 0, 0, "bcnstv", 0, 0);
    const double span = chart.x_max - chart.x_min;
    for (const ChartTick& t : chart.x_ticks) {
      pljoin(t.x, 0, t.x, y_max * 0.015);
      plmtex("b", 1.5, (t.x - chart.x_min) / span, 0.5, plplot_text(t.text).c_str());
    }
  } else {
    plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  }
  plmtex("b", 3.0, 0.5, 0.5, plplot_text(chart.x_label).c_str());
  plmtex("l", y_label_offset, 0.5, 0.5, plplot_text(chart.y_label).c_str());
  plschr(0, 1.25);
  plmtex("t", 1.6, 0.5, 0.5, plplot_text(chart.title).c_str());
  plschr(0, 1.0);

  const size_t n = chart.lines.size();
  std::vector<int> opts(n, PL_LEGEND_LINE | PL_LEGEND_SYMBOL), colors(n), styles(n, 1),
      symbol_counts(n, 1), no_box(n, 0);
  std::vector<double> widths(n, 2.5), symbol_scales(n, 1.0), no_box_d(n, 0);
  std::vector<std::string> names(n);
  std::vector<const char*> texts(n), symbols(n);
  for (size_t i = 0; i < n; ++i) {
    const ChartLine& line = chart.lines[i];
    colors[i] = kFirstSeries + static_cast<int>(i % kSeriesColorCount);
    symbols[i] = kMarkers[i % kMarkerCount];
    names[i] = plplot_text(line.name);
    texts[i] = names[i].c_str();
    plcol0(colors[i]);
    plwidth(2.5);
    for (size_t k = 1; k < line.points.size(); ++k) {
      const ChartPoint& a = line.points[k - 1];
      const ChartPoint& b = line.points[k];
      pllsty(a.off_scale || b.off_scale ? 2 : 1);
      pljoin(a.x, a.y, b.x, b.y);
    }
    pllsty(1);
    draw_markers(line, i % kMarkerCount, chart.x_max - chart.x_min, y_max);
  }
  plwidth(1);

  std::vector<int> text_colors(n, kInk);
  double legend_w = 0, legend_h = 0;
  pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           // Inside the top left corner, pushed one viewport width right: its left edge just
           // past the plot's right edge, its top level with the plot's.
           PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 1.02, 0.0, 0.06, 0, kInk, 1, 0,
           0, static_cast<int>(n), opts.data(), 1.0, 0.95, 2.0, 0.0, text_colors.data(),
           texts.data(), no_box.data(), no_box.data(), no_box_d.data(), no_box_d.data(),
           colors.data(), styles.data(), widths.data(), colors.data(), symbol_scales.data(),
           symbol_counts.data(), symbols.data());
}

// A unique file name for PLplot to write to; removed when it goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(const char* extension) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "servebench-chart-XXXXXX").string() + "." +
        extension;
    const int suffix = static_cast<int>(std::string(extension).size()) + 1;
    const int fd = mkstemps(pattern.data(), suffix);
    if (fd < 0) {
      throw core::Error(core::ErrorKind::kInput, pattern, "cannot create a temporary file");
    }
    close(fd);
    path = pattern;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// Cairo draws text as glyph outlines, so an SVG has no words in it; a <title> and <desc> name
// the chart, its axes and series for screen readers, search and tests.
std::string with_svg_description(std::string svg, const ChartData& chart) {
  const size_t open = svg.find("<svg");
  const size_t end = open == std::string::npos ? open : svg.find('>', open);
  if (end == std::string::npos) return svg;
  std::string names;
  for (const ChartLine& line : chart.lines) names += (names.empty() ? "" : ", ") + line.name;
  using markup::escape;
  const std::string text =
      "\n<title>" + escape(chart.title) + "</title>\n<desc>x: " + escape(chart.x_label) +
      "; y: " + escape(chart.y_label) + "; series: " + escape(names) + "</desc>";
  svg.insert(end + 1, text);
  return svg;
}

}  // namespace

ImageFormat parse_image_format(const std::string& name) {
  if (const FormatName* row = find_row(kFormats, &FormatName::extension, name)) {
    return row->format;
  }
  usage("--chart-format", "'" + name + "' is not one of png, svg, pdf");
}

const char* image_extension(ImageFormat format) {
  return format_name(format).extension;
}

std::string render_charts(std::span<const ChartData> charts, ImageFormat format) {
  if (charts.empty()) usage("--chart", "no chart to draw");
  if (format != ImageFormat::kPdf && charts.size() != 1) {
    usage("--chart-format", "a PNG or SVG file holds one chart; PDF takes one page per chart");
  }
  for (const ChartData& chart : charts) {
    if (chart.lines.empty()) {
      const bool e2el = chart.y_key.find("e2el") != std::string::npos;
      throw core::Error(core::ErrorKind::kInput, chart.slug,
                        "no result carries " + chart.y_key +
                            (e2el ? " (vLLM writes it with --percentile-metrics e2el; else it is "
                                    "derived from a latencies array)"
                                  : ""));
    }
  }
  TempFile file(image_extension(format));
  {
    const std::lock_guard lock(plplot_mutex);
    const char* device = format_name(format).device;
    require_device(device);
    plsdev(device);
    plsfnam(file.path.c_str());
    plspage(0, 0, kPageWidth, kPageHeight, 0, 0);
    plscolbg(255, 255, 255);
    plscol0(kInk, 0, 0, 0);
    plscol0(kGrid, 222, 222, 222);
    for (size_t i = 0; i < kSeriesColorCount; ++i) {
      const auto& c = kSeriesColors[i];
      plscol0(kFirstSeries + static_cast<int>(i), c[0], c[1], c[2]);
    }
    // Axis numbers as plain decimals up to six digits (no "×10³" exponent beside the axis).
    plsxax(6, 0);
    plsyax(6, 0);
    plinit();
    for (const ChartData& chart : charts) draw_chart(chart);
    plend();
  }
  std::ifstream in(file.path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (bytes.str().empty()) {
    throw core::Error(core::ErrorKind::kInput, file.path, "PLplot wrote an empty chart file");
  }
  if (format == ImageFormat::kSvg) return with_svg_description(bytes.str(), charts.front());
  return bytes.str();
}

}  // namespace servebench::report
