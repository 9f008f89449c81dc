// Chart geometry from text widths (chart_layout.h). PLplot 5.15 cannot measure text before
// drawing it, so widths are estimated from the cairo drivers' font (checked against the PDF's
// text boxes with pdftotext -bbox: docs/reports.md).
#include "report/chart_layout.h"

#include <algorithm>
#include <cmath>

#include "core/json_text.h"

namespace servebench::report {

namespace {

constexpr double kAdvanceEm = 0.64;  // a digit's advance, and most lower case letters' at most

size_t char_count(std::string_view text) {
  size_t n = 0;
  for (size_t i = 0; i < text.size(); ++n)
    i += static_cast<size_t>(std::abs(core::utf8_char_at(text, i)));
  return n;
}

}  // namespace

namespace {

std::vector<std::string> shorten_names_at(const std::vector<std::string>& names, size_t max_chars,
                                          double end_share) {
  // What the names share at the start (up to a space or "/") tells nothing apart: cut that first,
  // so that "inference-perf-ib stage_3 (64 qps)" keeps "stage_3 (64 qps)" whole.
  size_t common = names.empty() ? 0 : names.front().size();
  for (const std::string& n : names) {
    size_t i = 0;
    while (i < common && i < n.size() && n[i] == names.front()[i]) ++i;
    common = i;
  }
  if (names.size() < 2) common = 0;
  while (common > 0 &&
         std::string_view(" /").find(names.front()[common - 1]) == std::string_view::npos) {
    --common;
  }
  std::vector<std::string> out;
  for (const std::string& n : names) {
    const std::string_view tail = std::string_view(n).substr(common);
    const size_t tail_chars = char_count(tail);
    if (char_count(n) <= max_chars) {
      out.push_back(n);
    } else if (common > 0 && tail_chars + 2 <= max_chars) {
      // The shared start shortened, the rest whole.
      out.push_back(shorten_middle(std::string_view(n).substr(0, common), max_chars - tail_chars) +
                    std::string(tail));
    } else {
      // Still too long: the rest cut in its middle, half its start (the stage) and half its end
      // (" p99").
      out.push_back(common > 0 ? "…" + shorten_middle(tail, max_chars - 1, end_share)
                               : shorten_middle(n, max_chars, end_share));
    }
  }
  return out;
}

size_t distinct(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return static_cast<size_t>(std::unique(names.begin(), names.end()) - names.begin());
}

}  // namespace

std::vector<std::string> shorten_names(const std::vector<std::string>& names, size_t max_chars) {
  // Where the cut goes: wherever the names stay told apart, nearest the middle first.
  const size_t wanted = distinct(names);
  std::vector<std::string> first;
  for (const double end_share : {0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2}) {
    std::vector<std::string> out = shorten_names_at(names, max_chars, end_share);
    if (distinct(out) == wanted) return out;
    if (first.empty()) first = std::move(out);
  }
  return first;
}

double text_width_mm(std::string_view text, double height_mm) {
  // DejaVu Sans' advances, rounded up by class: narrow marks and letters about 0.28-0.41 em,
  // digits and most lower case at most 0.64, capitals at most 0.77, m and w 0.97.
  double em = 0;
  for (size_t i = 0; i < text.size();) {
    const int len = core::utf8_char_at(text, i);
    const char c = text[i];
    if (len != 1) {
      em += 0.8;
    } else if (std::string_view(" .,:;'!|()[]{}iljtfr-").find(c) != std::string_view::npos) {
      em += 0.42;
    } else if (c == 'm' || c == 'w' || c == 'M' || c == 'W' || c == '@' || c == '%') {
      em += 1.0;
    } else if (c >= 'A' && c <= 'Z') {
      em += 0.78;
    } else {
      em += kAdvanceEm;
    }
    i += static_cast<size_t>(std::abs(len));
  }
  return em * kCairoEmPerHeight * height_mm;
}

std::string shorten_middle(std::string_view text, size_t max_chars, double end_share) {
  const size_t n = char_count(text);
  if (n <= max_chars) return std::string(text);
  if (max_chars < 2) return "…";
  const size_t keep_end = static_cast<size_t>(static_cast<double>(max_chars - 1) * end_share),
               keep_start = max_chars - 1 - keep_end;
  auto offset = [&](size_t chars) {
    size_t i = 0;
    for (size_t c = 0; c < chars && i < text.size(); ++c)
      i += static_cast<size_t>(std::abs(core::utf8_char_at(text, i)));
    return i;
  };
  return std::string(text.substr(0, offset(keep_start))) + "…" +
         std::string(text.substr(offset(n - keep_end)));
}

ChartLayout chart_layout(const ChartLayoutInput& in) {
  ChartLayout out;
  const double w = in.page_width_mm;
  // Left: the y axis numbers, then the rotated y label beyond them.
  const double tick_mm = in.y_tick_chars * kAdvanceEm * kCairoEmPerHeight * in.label_height_mm;
  out.y_label_offset = 0.8 + tick_mm / in.label_height_mm + 0.9;
  out.plot_x0 = std::max(0.08, (out.y_label_offset + 0.9) * in.label_height_mm / w);
  out.plot_y0 = 0.12;
  out.plot_y1 = in.subtitle.empty() ? 0.9 : 0.86;

  // Right: the legend, as pllegend draws it at x 1.02 of the plot: its line sample 0.06 of the
  // plot's width, then the text 1 legend character height on, within a border.
  const double right = 0.98;
  const double max_legend = 0.36;  // of the page: the plot keeps the larger part
  const double fixed_mm = 3.5 * in.legend_height_mm;
  auto legend_text_mm = [&](const std::vector<std::string>& names) {
    double m = 0;
    for (const std::string& n : names) m = std::max(m, text_width_mm(n, in.legend_height_mm));
    return m;
  };
  out.names = in.names;
  // With the plot's right edge at x1, the legend ends at x1 + 0.08 (x1 - x0) + text: solve.
  auto plot_right_for = [&](double text_frac) {
    return (right - text_frac + 0.08 * out.plot_x0) / 1.08;
  };
  double text_frac = (fixed_mm + legend_text_mm(out.names)) / w;
  double x1 = plot_right_for(text_frac);
  if (right - x1 > max_legend) {
    // Too long: shorten every name to what fits in the largest legend allowed.
    x1 = right - max_legend;
    const double room_mm = (right - x1 - 0.08 * (x1 - out.plot_x0)) * w - fixed_mm;
    // The most characters whose shortened names fit the room.
    size_t max_chars = static_cast<size_t>(
        std::max(2.0, std::floor(room_mm / (0.42 * kCairoEmPerHeight * in.legend_height_mm))));
    out.names = shorten_names(in.names, max_chars);
    while (max_chars > 2 && legend_text_mm(out.names) > room_mm) {
      out.names = shorten_names(in.names, --max_chars);
    }
    text_frac = (fixed_mm + legend_text_mm(out.names)) / w;
  }
  out.plot_x1 = in.names.empty() ? right : x1;
  const double vp = out.plot_x1 - out.plot_x0;
  out.legend_x0 = out.plot_x1 + 0.02 * vp;
  out.legend_x1 = in.names.empty() ? out.legend_x0 : out.legend_x0 + 0.06 * vp + text_frac;

  // Top: the title over the plot, moved (and if need be shrunk) to stay on the page.
  const double title_frac = text_width_mm(in.title, in.title_height_mm) / w;
  out.title_scale = std::min(1.0, 0.96 / std::max(title_frac, 1e-9));
  const double width = title_frac * out.title_scale;
  const double centre =
      std::clamp((out.plot_x0 + out.plot_x1) / 2, 0.02 + width / 2, 0.98 - width / 2);
  out.title_x0 = centre - width / 2;
  out.title_x1 = centre + width / 2;
  const double subtitle_frac = text_width_mm(in.subtitle, in.subtitle_height_mm) / w;
  out.subtitle_scale = std::min(1.0, 0.96 / std::max(subtitle_frac, 1e-9));
  return out;
}

}  // namespace servebench::report
