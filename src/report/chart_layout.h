// Where a chart's parts go on its (sub)page, from the text it must hold: the plot, the legend
// right of it, the title over it. Internal to report (chart_render.cpp draws with it); kept free
// of PLplot so that the geometry is tested without drawing (chart_layout_test.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace servebench::report {

// Sizes in millimetres as PLplot gives them (plgspa, plgchr). Text heights are PLplot's
// character heights; the cairo drivers draw a font 1.34 times as large (kCairoEmPerHeight).
struct ChartLayoutInput {
  double page_width_mm = 0;
  double label_height_mm = 0;   // axis numbers and labels
  double title_height_mm = 0;   // the title at its wanted size
  double legend_height_mm = 0;  // legend text
  double subtitle_height_mm = 0;
  std::string title;
  std::string subtitle;  // centred on the page, under the title; empty: none
  int y_tick_chars = 1;  // the widest y axis number, in characters
  std::vector<std::string> names;
};

// Fractions of the (sub)page, 0 (left, bottom) to 1.
struct ChartLayout {
  double plot_x0 = 0, plot_x1 = 1, plot_y0 = 0, plot_y1 = 1;
  double y_label_offset = 0;            // in label character heights left of the plot (plmtex "l")
  double legend_x0 = 0, legend_x1 = 0;  // the legend box's estimated extent
  double title_scale = 1;               // on title_height_mm, so that the title fits the page
  double title_x0 = 0, title_x1 = 0;    // the title's estimated extent
  double subtitle_scale = 1;            // on subtitle_height_mm, so that it fits the page
  std::vector<std::string> names;       // the legend's entries, long ones shortened to fit
};

constexpr double kCairoEmPerHeight = 1.34;
// The width the cairo drivers give `text` (UTF-8) at PLplot character height `height_mm`: a
// DejaVu Sans' advances by character class, rounded up.
double text_width_mm(std::string_view text, double height_mm);
// `text` cut in the middle with "…" to at most `max_chars` characters, keeping its start and
// its end, `end_share` of what is kept from the end (where runs and stages differ by default:
// "openai-4.…261126-112854").
std::string shorten_middle(std::string_view text, size_t max_chars, double end_share = 0.6);

// Legend entries of at most `max_chars` characters: a start all of them share (up to a
// space or "/") is shortened first, then each name in its middle (shorten_middle), the cut
// placed where the names stay told apart.
std::vector<std::string> shorten_names(const std::vector<std::string>& names, size_t max_chars);

ChartLayout chart_layout(const ChartLayoutInput& in);

}  // namespace servebench::report
