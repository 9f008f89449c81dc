// Drawing charts with PLplot's cairo drivers (pngcairo, svgcairo, pdfcairo): one chart a page,
// or a timeline's panels on one page (timeline.cpp computes them). docs/reports.md describes the
// look (colours, markers, the legend).
#include <plplot.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/error.h"
#include "report/chart_layout.h"
#include "report/charts.h"
#include "report/markup.h"

namespace servebench::report {

namespace {

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

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
constexpr int kTimelinePanelWidth = 760, kTimelinePanelHeight = 400;

struct FormatName {
  ImageFormat format;
  const char* extension;
  const char* device;  // PLplot's cairo driver for it
};
constexpr FormatName kFormats[] = {{ImageFormat::kPng, "png", "pngcairo"},
                                   {ImageFormat::kSvg, "svg", "svgcairo"},
                                   {ImageFormat::kPdf, "pdf", "pdfcairo"}};

const FormatName& format_name(ImageFormat format) {
  for (const FormatName& row : kFormats) {
    if (row.format == format) return row;
  }
  return kFormats[0];
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

// How large text is drawn: a chart alone on its page at 1; a timeline's panels, each a subpage
// smaller than a chart's page, smaller, so that titles, labels and legends keep their room.
struct TextScale {
  double scale = 1.0;
  double legend_text = 1.0;  // legend text against the labels'
};
TextScale text_scale;

void draw_chart(const ChartData& chart) {
  const double k = text_scale.scale;
  double y_max = 0;
  for (const ChartLine& line : chart.lines) {
    for (const ChartPoint& p : line.points) {
      if (std::isfinite(p.y)) y_max = std::max(y_max, p.y);
    }
  }
  y_max = y_max > 0 ? y_max * 1.1 : 1.0;

  pladv(0);
  plschr(0, k);
  // The layout from the text it holds, in PLplot's millimetres (chart_layout.h).
  double default_mm = 0, label_mm = 0, page_x0 = 0, page_x1 = 0, page_y0 = 0, page_y1 = 0;
  plgchr(&default_mm, &label_mm);
  plgspa(&page_x0, &page_x1, &page_y0, &page_y1);
  ChartLayoutInput layout_in;
  layout_in.page_width_mm = page_x1 - page_x0;
  layout_in.label_height_mm = label_mm;
  layout_in.title_height_mm = 1.25 * label_mm;
  // pllegend scales the default height, not the current one.
  layout_in.legend_height_mm = 0.95 * text_scale.legend_text * default_mm;
  layout_in.title = chart.title;
  layout_in.subtitle = chart.subtitle;
  layout_in.subtitle_height_mm = 0.8 * label_mm;
  // PLplot writes up to six digits plainly; below 5 it ticks in decimals ("0.5").
  layout_in.y_tick_chars =
      static_cast<int>(std::floor(std::log10(std::max(y_max, 1.0)))) + 1 + (y_max < 5 ? 2 : 0);
  for (const ChartLine& line : chart.lines) layout_in.names.push_back(line.name);
  const ChartLayout layout = chart_layout(layout_in);

  plvpor(layout.plot_x0, layout.plot_x1, layout.plot_y0, layout.plot_y1);
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
  plmtex("l", layout.y_label_offset, 0.5, 0.5, plplot_text(chart.y_label).c_str());
  const double plot_width = layout.plot_x1 - layout.plot_x0;
  plschr(0, 1.25 * k * layout.title_scale);
  plmtex("t", chart.subtitle.empty() ? 1.6 : 2.4,
         ((layout.title_x0 + layout.title_x1) / 2 - layout.plot_x0) / plot_width, 0.5,
         plplot_text(chart.title).c_str());
  if (!chart.subtitle.empty()) {
    // Centred on the page, not over the plot: it may be longer than the plot is wide.
    plschr(0, 0.8 * k * layout.subtitle_scale);
    plmtex("t", 1.0, (0.5 - layout.plot_x0) / plot_width, 0.5, plplot_text(chart.subtitle).c_str());
  }
  plschr(0, k);

  struct LabelBox {
    double x0, x1, y0, y1;
    bool overlaps(const LabelBox& o) const {
      return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1;
    }
  };
  std::vector<LabelBox> drawn_labels;
  const size_t n = chart.lines.size();
  std::vector<int> opts(n, PL_LEGEND_LINE | PL_LEGEND_SYMBOL), colors(n), styles(n, 1),
      symbol_counts(n, 1), no_box(n, 0);
  std::vector<double> widths(n, 2.5), symbol_scales(n, 1.0), no_box_d(n, 0);
  std::vector<std::string> names(n);
  std::vector<const char*> texts(n), symbols(n);
  for (size_t i = 0; i < n; ++i) {
    const ChartLine& line = chart.lines[i];
    const size_t entry = line.color >= 0 ? static_cast<size_t>(line.color) : i;
    colors[i] = kFirstSeries + static_cast<int>(entry % kSeriesColorCount);
    symbols[i] = kMarkers[entry % kMarkerCount];
    names[i] = plplot_text(layout.names[i]);
    texts[i] = names[i].c_str();
    if (!line.markers) opts[i] = PL_LEGEND_LINE;
    if (line.dashed) styles[i] = 2;
    // Lines of many points are drawn thinner, or they merge into a band.
    widths[i] = line.markers ? 2.5 : 1.8;
    plcol0(colors[i]);
    plwidth(widths[i]);
    for (size_t k = 1; k < line.points.size(); ++k) {
      const ChartPoint& a = line.points[k - 1];
      const ChartPoint& b = line.points[k];
      if (!std::isfinite(a.y) || !std::isfinite(b.y)) continue;  // a gap
      pllsty(a.off_scale || b.off_scale || line.dashed ? 2 : 1);
      pljoin(a.x, a.y, b.x, b.y);
    }
    pllsty(1);
    if (line.markers) draw_markers(line, entry % kMarkerCount, chart.x_max - chart.x_min, y_max);
    // Each point's load beside it (a throughput axis does not show which rate a point is).
    plschr(0, 0.65 * k);
    for (size_t j = 0; j < line.point_labels.size() && j < line.points.size(); ++j) {
      const ChartPoint& p = line.points[j];
      const std::string& text = line.point_labels[j];
      if (text.empty() || !std::isfinite(p.y)) continue;
      // Beside the marker, toward the middle of the plot, so that it stays inside it; not over
      // a label already drawn (points crowd where a sweep saturates).
      const double span = chart.x_max - chart.x_min;
      const bool left_half = p.x < chart.x_min + 0.7 * span;
      const double width = 0.011 * span * static_cast<double>(text.size());
      const double x = p.x + (left_half ? 0.015 : -0.015) * span;
      const LabelBox box{left_half ? x : x - width, left_half ? x + width : x, p.y + 0.025 * y_max,
                         p.y + 0.075 * y_max};
      if (std::any_of(drawn_labels.begin(), drawn_labels.end(),
                      [&](const LabelBox& b) { return b.overlaps(box); })) {
        continue;
      }
      drawn_labels.push_back(box);
      plptex(x, p.y + 0.045 * y_max, 1, 0, left_half ? 0.0 : 1.0, plplot_text(text).c_str());
    }
    plschr(0, k);
  }
  plwidth(1);

  std::vector<int> text_colors(n, kInk);
  double legend_w = 0, legend_h = 0;
  pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           // Inside the top left corner, pushed one viewport width right: its left edge just
           // past the plot's right edge, its top level with the plot's.
           PL_POSITION_LEFT | PL_POSITION_TOP | PL_POSITION_INSIDE, 1.02, 0.0, 0.06, 0, kInk, 1, 0,
           0, static_cast<int>(n), opts.data(), 1.0, 0.95 * text_scale.legend_text, 2.0, 0.0,
           text_colors.data(), texts.data(), no_box.data(), no_box.data(), no_box_d.data(),
           no_box_d.data(), colors.data(), styles.data(), widths.data(), colors.data(),
           symbol_scales.data(), symbol_counts.data(), symbols.data());
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
  for (const FormatName& row : kFormats) {
    if (row.extension == name) return row.format;
  }
  usage("--chart-format", "'" + name + "' is not one of png, svg, pdf");
}

const char* image_extension(ImageFormat format) {
  return format_name(format).extension;
}

namespace {

// Every chart has a line, or the error says which figure no result carries.
void require_lines(std::span<const ChartData> charts) {
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
}

// Draws `charts` with PLplot into a file of `format` and returns its bytes: a page of
// `columns` × `rows` subpages, each chart in the next one (a new page when they are used up).
std::string draw_pages(std::span<const ChartData> charts, ImageFormat format, int width, int height,
                       int columns, int rows) {
  TempFile file(image_extension(format));
  {
    const std::lock_guard lock(plplot_mutex);
    const char* device = format_name(format).device;
    require_device(device);
    plsdev(device);
    plsfnam(file.path.c_str());
    plspage(0, 0, width, height, 0, 0);
    plssub(columns, rows);
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
    if (columns * rows > 1) text_scale = {0.75, 0.8};
    for (const ChartData& chart : charts) draw_chart(chart);
    text_scale = {};
    plend();
  }
  std::ifstream in(file.path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (bytes.str().empty()) {
    throw core::Error(core::ErrorKind::kInput, file.path, "PLplot wrote an empty chart file");
  }
  return bytes.str();
}

}  // namespace

std::string render_charts(std::span<const ChartData> charts, ImageFormat format) {
  if (charts.empty()) usage("--chart", "no chart to draw");
  if (format != ImageFormat::kPdf && charts.size() != 1) {
    usage("--chart-format", "a PNG or SVG file holds one chart; PDF takes one page per chart");
  }
  require_lines(charts);
  const std::string bytes = draw_pages(charts, format, kPageWidth, kPageHeight, 1, 1);
  if (format == ImageFormat::kSvg) return with_svg_description(bytes, charts.front());
  return bytes;
}

std::string render_timeline(std::span<const ChartData> panels, ImageFormat format) {
  if (panels.empty()) {
    throw core::Error(core::ErrorKind::kInput, "timeline",
                      "no run has per-request records (a records file beside its result, or "
                      "--save-detailed arrays) or scraped server series to draw");
  }
  require_lines(panels);
  // A dashboard: two panels a row, each about as large as a chart of the HTML report's grid.
  const int columns = panels.size() > 1 ? 2 : 1;
  const int rows = static_cast<int>((panels.size() + 1) / static_cast<size_t>(columns));
  const std::string bytes = draw_pages(panels, format, kTimelinePanelWidth * columns,
                                       kTimelinePanelHeight * rows, columns, rows);
  if (format == ImageFormat::kSvg) return with_svg_description(bytes, panels.front());
  return bytes;
}

}  // namespace servebench::report
