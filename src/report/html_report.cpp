// The HTML report: one self-contained page (inline CSS and SVG, no scripts, no external URLs) with
// the runs' metadata, the seed tables and the charts. The tables are the markdown layouts of
// tables.cpp turned into HTML, so both always show the same columns and numbers.
#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "report/charts.h"
#include "report/markup.h"
#include "report/tables.h"

namespace servebench::report {
namespace {

using markup::escape;

std::vector<std::string> pipe_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string inner = line.substr(1, line.size() >= 2 ? line.size() - 2 : 0);
  std::stringstream in(inner);
  std::string cell;
  while (std::getline(in, cell, '|')) {
    const size_t b = cell.find_first_not_of(' ');
    cells.push_back(b == std::string::npos ? ""
                                           : cell.substr(b, cell.find_last_not_of(' ') - b + 1));
  }
  return cells;
}

// Markdown as tables.cpp writes it: "## " headings, pipe tables whose second line holds the
// alignment (":---", "---:", ":---:"), and plain lines.
std::string markdown_to_html(const std::string& markdown) {
  std::vector<std::string> lines;
  std::stringstream in(markdown);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string html;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("## ", 0) == 0) {
      html += "<h3>" + escape(line.substr(3)) + "</h3>\n";
    } else if (line.rfind("|", 0) == 0 && i + 1 < lines.size() && lines[i + 1].rfind("|", 0) == 0) {
      const std::vector<std::string> headers = pipe_cells(line);
      std::vector<std::string> aligns;
      for (const std::string& rule : pipe_cells(lines[i + 1])) {
        const bool left = !rule.empty() && rule.front() == ':';
        const bool right = !rule.empty() && rule.back() == ':';
        aligns.push_back(left && right ? "center" : right ? "right" : "left");
      }
      html += "<div class=\"table\"><table>\n<thead><tr>";
      for (const std::string& h : headers) html += "<th>" + escape(h) + "</th>";
      html += "</tr></thead>\n<tbody>\n";
      for (i += 2; i < lines.size() && lines[i].rfind("|", 0) == 0; ++i) {
        html += "<tr>";
        const std::vector<std::string> cells = pipe_cells(lines[i]);
        for (size_t c = 0; c < cells.size(); ++c) {
          const std::string& align = c < aligns.size() ? aligns[c] : "left";
          html += "<td class=\"" + align + "\">" + escape(cells[c]) + "</td>";
        }
        html += "</tr>\n";
      }
      --i;
      html += "</tbody></table></div>\n";
    } else if (!line.empty()) {
      html += "<p>" + escape(line) + "</p>\n";
    }
  }
  return html;
}

// Inline SVGs share the page's id space; cairo names its glyphs and clips "glyph0-1", "clip1" in
// every file, so each chart's ids get a prefix of their own.
std::string inline_svg(const std::string& svg, const std::string& prefix) {
  std::string out = svg.substr(std::min(svg.find("<svg"), svg.size()));
  const std::pair<std::string, std::string> kRenames[] = {
      {"id=\"", "id=\"" + prefix}, {"href=\"#", "href=\"#" + prefix}, {"url(#", "url(#" + prefix}};
  for (const auto& [from, to] : kRenames) {
    for (size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size())) {
      out.replace(at, from.size(), to);
    }
  }
  return out;
}

// The distinct values of a string key across the runs, in first-seen order, "; "-joined.
std::string distinct_values(std::span<const CompareInput> inputs, const std::string& key) {
  std::vector<std::string> values;
  std::set<std::string> seen;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      const auto it = run.result.find(key);
      if (it == run.result.end() || !it->is_string()) continue;
      if (seen.insert(it->get<std::string>()).second) values.push_back(it->get<std::string>());
    }
  }
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : "; ") + v;
  return out.empty() ? "n/a" : out;
}

// The runs' dates ("%Y%m%d-%H%M%S") as a range, "2026-11-23 17:34:43 to 18:02:10 (12 runs)",
// not every run's stamp.
std::string date_range(std::span<const CompareInput> inputs) {
  std::vector<std::string> dates;
  for (const CompareInput& input : inputs) {
    for (const RunResult& run : input.runs) {
      const auto it = run.result.find("date");
      if (it != run.result.end() && it->is_string()) dates.push_back(it->get<std::string>());
    }
  }
  if (dates.empty()) return "n/a";
  std::sort(dates.begin(), dates.end());
  auto readable = [](const std::string& d, bool with_day) {
    if (d.size() != 15 || d[8] != '-') return d;
    const std::string time = d.substr(9, 2) + ":" + d.substr(11, 2) + ":" + d.substr(13, 2);
    if (!with_day) return time;
    return d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2) + " " + time;
  };
  const std::string& first = dates.front();
  const std::string& last = dates.back();
  if (first == last) return readable(first, true);
  const bool same_day = first.substr(0, 8) == last.substr(0, 8);
  return readable(first, true) + " to " + readable(last, !same_day) +
         fmt::format(" ({} runs)", dates.size());
}

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 24px; color: #1a1a1a;
       background: #ffffff; }
h1 { font-size: 1.6em; margin: 0 0 8px 0; }
h2 { font-size: 1.25em; border-bottom: 2px solid #1f77b4; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 1.05em; }
dl.meta { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; margin: 0; }
dl.meta dt { font-weight: bold; }
dl.meta dd { margin: 0; }
div.table { overflow-x: auto; max-width: 100%; border-right: 1px solid #dddddd; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #c8c8c8; padding: 3px 5px; white-space: nowrap; }
th { background: #eef3f8; white-space: normal; vertical-align: bottom; }
th:first-child, td:first-child { position: sticky; left: 0; background: #ffffff; white-space: nowrap;
                                 box-shadow: 1px 0 0 #c8c8c8; }
th:first-child { background: #eef3f8; }
tbody tr:nth-child(even) td:first-child { background: #f7f7f7; }
tbody tr:nth-child(even) { background: #f7f7f7; }
td.left { white-space: normal; min-width: 6em; }
td.right { text-align: right; font-variant-numeric: tabular-nums; }
td.center { text-align: center; font-variant-numeric: tabular-nums; }
div.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr));
             gap: 16px; }
figure { margin: 0; border: 1px solid #dddddd; padding: 8px; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { font-size: 0.85em; color: #555555; margin-top: 4px; }
p.note { font-size: 0.9em; color: #444444; }
footer { margin-top: 32px; font-size: 0.8em; color: #666666; }
)";

}  // namespace

std::string html_report(std::span<const CompareInput> inputs, const SeriesRule& rule,
                        ChartStat stat) {
  std::vector<RunResult> runs;
  for (const CompareInput& input : inputs)
    runs.insert(runs.end(), input.runs.begin(), input.runs.end());
  const SeriesRule effective_rule = resolve_series_rule(inputs, rule);
  const std::vector<Series> series = group_series(inputs, effective_rule);
  std::string series_by = "test name less its load";
  if (effective_rule.kind == SeriesRule::Kind::kInput) series_by = "input";
  if (effective_rule.kind == SeriesRule::Kind::kKey) series_by = "result key " + effective_rule.key;
  const LoadAxis axis = choose_load_axis(series);

  std::string series_names;
  for (const Series& s : series) {
    series_names +=
        fmt::format("{}{} ({} runs)", series_names.empty() ? "" : "; ", s.name, s.runs.size());
  }
  std::string sources;
  for (const CompareInput& input : inputs) sources += (sources.empty() ? "" : "; ") + input.name;

  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>servebench report</title>\n<style>" +
      std::string(kStyle) + "</style>\n</head>\n<body>\n<header>\n<h1>servebench report</h1>\n";
  html += "<dl class=\"meta\">\n";
  const std::pair<std::string, std::string> kMeta[] = {
      {"Runs", std::to_string(runs.size())},
      {"Inputs", sources},
      {"Series", series_names},
      {"Series by", series_by},
      {"Models", distinct_values(inputs, "model_id")},
      {"Backends", distinct_values(inputs, "backend")},
      {"GPUs", distinct_values(inputs, "gpu_type")},
      {"Dates", date_range(inputs)},
      {"Load axis", axis == LoadAxis::kRequestRate ? "request rate" : "max concurrency"},
      {"Latency statistic", chart_stat_name(stat)},
  };
  for (const auto& [term, value] : kMeta) {
    html += "<dt>" + escape(term) + "</dt><dd>" + escape(value) + "</dd>\n";
  }
  html += "</dl>\n</header>\n<main>\n<section>\n<h2>Results</h2>\n";
  html += markdown_to_html(vllm_serving_markdown(runs, MarkdownStyle::kTabulate));
  if (axis == LoadAxis::kMaxConcurrency) {
    // Seed 004's table, one per series (its layout alone makes one per label, which several
    // deployments at the same ISL:OSL share).
    for (const Series& s : series) {
      std::vector<RunResult> series_runs;
      for (const RunResult* run : s.runs) series_runs.push_back(*run);
      html +=
          "<h3>" + escape(s.name) + "</h3>\n" + markdown_to_html(concurrency_markdown(series_runs));
    }
  }
  html += "</section>\n<section>\n<h2>Charts</h2>\n<div class=\"charts\">\n";
  int drawn = 0;
  for (const std::string& name : chart_kind_names()) {
    const ChartData chart = chart_data(series, parse_chart_kind(name), stat, axis);
    if (chart.lines.empty()) continue;  // no run carries this figure (e.g. E2EL in vLLM's)
    const ChartData one[] = {chart};
    const std::string svg = render_charts(one, ImageFormat::kSvg);
    html += "<figure id=\"chart-" + name + "\">\n" +
            inline_svg(svg, "c" + std::to_string(drawn) + "-") + "\n";
    bool synchronous = false, unlimited = false;
    for (const ChartTick& t : chart.x_ticks) {
      synchronous = synchronous || t.text == "sync";
      unlimited = unlimited || t.text == "inf" || t.text == "unlimited" || t.text == "throughput";
    }
    std::string caption;
    if (unlimited) {
      caption = "Dashed: to the unlimited load, drawn one step past the largest measured load";
    }
    if (synchronous) {
      caption += std::string(caption.empty() ? "Dashed: " : "; ") +
                 "from the synchronous run (one request at a time), one step before the smallest";
    }
    if (!caption.empty()) html += "<figcaption>" + escape(caption) + ".</figcaption>\n";
    html += "</figure>\n";
    ++drawn;
  }
  html += "</div>\n</section>\n";
  const std::vector<ChartData> panels = timeline_panels(inputs);
  if (!panels.empty()) {
    html +=
        "<section>\n<h2>Timelines</h2>\n<p class=\"note\">Each run over time, every run a "
        "colour. Client panels from the runs' per-request records; \"(server)\", DCGM and "
        "node_exporter panels from the series scraped during the run (kept with "
        "--save-detailed).</p>\n<div class=\"charts\">\n";
    for (const ChartData& panel : panels) {
      const ChartData one[] = {panel};
      html += "<figure id=\"" + panel.slug + "\">\n" +
              inline_svg(render_charts(one, ImageFormat::kSvg), "c" + std::to_string(drawn) + "-") +
              "\n</figure>\n";
      ++drawn;
    }
    html += "</div>\n</section>\n";
  }
  html += "</main>\n";
  html +=
      "<footer>Made by servebench report from result files. Definitions: vLLM's (TTFT, TPOT "
      "first token excluded, ITL per streamed chunk, E2E request latency).</footer>\n"
      "</body>\n</html>\n";
  return html;
}

}  // namespace servebench::report
