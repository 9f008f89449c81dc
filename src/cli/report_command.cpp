// `servebench report FILE|DIR…`: lays finished results (servebench's or vLLM's --save-result
// JSON) out in one of the seed layouts, as an HTML report, or as charts (--chart).
// docs/reports.md describes each layout and the charts.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_io.h"
#include "core/error.h"
#include "report/charts.h"
#include "report/tables.h"
#include "run/names.h"

namespace servebench::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> inputs;
  std::string format = "vllm-md";
  std::string output;
  std::string chart;         // a chart kind or "all"; empty: a table layout
  std::string chart_format;  // png, svg, pdf; empty: from --output's extension
  std::string stat = "mean";
  std::string series_by = "auto";
};

const char* const kFormats =
    "vllm-md (vLLM suite table, tabulate layout), vllm-md-aligned (the same, padded cells), "
    "vllm-json (pandas JSON), concurrency, guidellm, inference-perf, csv, html (tables and charts "
    "in one self-contained page)";

std::string render(const std::string& format, std::span<const report::RunResult> runs) {
  // With latency or throughput results among the runs, vLLM's three suite tables.
  if (format == "vllm-md") {
    return report::vllm_suite_markdown(runs, report::MarkdownStyle::kTabulate);
  }
  if (format == "vllm-md-aligned") {
    return report::vllm_suite_markdown(runs, report::MarkdownStyle::kAligned);
  }
  if (format == "vllm-json") return report::vllm_pandas_json(runs) + "\n";
  if (format == "concurrency") return report::concurrency_markdown(runs);
  if (format == "guidellm") return report::guidellm_tables(runs);
  if (format == "inference-perf") return report::inference_perf_stages_markdown(runs);
  if (format == "csv") return report::figures_csv(runs);
  throw core::Error(core::ErrorKind::kUsage, "--format",
                    "'" + format + "' is not a layout; one of: " + kFormats);
}

// --chart KIND writes one chart to --output; --chart all writes one PDF page per chart kind
// with data, or for PNG and SVG one file per kind into the --output directory.
void write_charts(const ReportFlags& f, std::span<const report::CompareInput> inputs) {
  if (f.output.empty()) {
    throw core::Error(core::ErrorKind::kUsage, "--chart", "needs --output FILE (or DIR)");
  }
  std::string format_name = f.chart_format;
  if (format_name.empty()) {
    format_name = std::filesystem::path(f.output).extension().string();
    if (format_name.empty()) {
      throw core::Error(core::ErrorKind::kUsage, "--chart-format",
                        "not given, and --output has no .png, .svg or .pdf extension");
    }
    format_name.erase(0, 1);
  }
  const report::ImageFormat format = report::parse_image_format(format_name);
  if (f.chart == "timeline") {  // every panel on one page (report::timeline_panels)
    run::write_text(f.output, report::render_timeline(report::timeline_panels(inputs), format));
    return;
  }
  const report::ChartStat stat = report::parse_chart_stat(f.stat);
  const std::vector<report::Series> series =
      report::group_series(inputs, report::parse_series_rule(f.series_by));
  const report::LoadAxis axis = report::choose_load_axis(series);
  std::vector<std::string> kinds = {f.chart};
  if (f.chart == "all") kinds = report::chart_kind_names();
  std::vector<report::ChartData> charts;
  for (const std::string& kind : kinds) {
    report::ChartData chart =
        report::chart_data(series, report::parse_chart_kind(kind), stat, axis);
    // "all" leaves out what no run carries (vLLM writes E2EL only on request).
    if (f.chart == "all" && chart.lines.empty()) continue;
    charts.push_back(std::move(chart));
  }
  if (charts.empty()) {
    throw core::Error(core::ErrorKind::kInput, f.inputs.front(),
                      "no result carries a figure any chart plots");
  }
  if (f.chart != "all" || format == report::ImageFormat::kPdf) {
    run::write_text(f.output, report::render_charts(charts, format));
    return;
  }
  std::error_code ec;
  std::filesystem::create_directories(f.output, ec);
  if (ec) throw core::Error(core::ErrorKind::kInput, f.output, "cannot create the directory");
  for (const report::ChartData& chart : charts) {
    const std::string path =
        (std::filesystem::path(f.output) / (chart.slug + "." + report::image_extension(format)))
            .string();
    run::write_text(path, report::render_charts(std::span(&chart, 1), format));
  }
}

}  // namespace

Action add_report_command(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Lay result files (servebench's or vLLM's serving, latency and throughput JSON, GuideLLM's "
      "benchmarks.json, inference-perf's lifecycle reports) out as tables");
  sub->add_option("inputs", flags->inputs, "Result files, or directories of *.json results")
      ->required();
  sub->add_option("--format", flags->format, std::string("Layout: ") + kFormats)
      ->capture_default_str();
  sub->add_option("--output", flags->output, "Write here instead of stdout");
  sub->add_option(
      "--chart", flags->chart,
      "Draw a chart instead of a table: throughput, ttft, tpot, itl, e2el (against "
      "load), ttft-vs-throughput … e2el-vs-throughput, all, or timeline (each run over time)");
  sub->add_option(
      "--chart-format", flags->chart_format,
      "png, svg or pdf (default: --output's extension); a PDF takes every chart, a page "
      "each; PNG and SVG with --chart all go into the --output directory");
  sub->add_option("--stat", flags->stat, "Latency statistic charted: mean, median or p99")
      ->capture_default_str();
  sub->add_option("--series-by", flags->series_by,
                  "One chart line per: auto, input (argument), name (test name less its load), "
                  "or a result key such as deployment (--metadata deployment=…) or label")
      ->capture_default_str();
  return [flags]() -> int {
    const ReportFlags& f = *flags;
    std::vector<report::CompareInput> inputs;
    for (const std::string& input : f.inputs) {
      inputs.push_back({input_name(input), report::load_runs(input)});
    }
    if (!f.chart.empty() || f.format == "html") {
      // Charts and the HTML report plot serving runs against their load; latency and
      // throughput tests have no load axis.
      for (report::CompareInput& input : inputs) {
        input.runs = report::runs_of_kind(input.runs, "serving");
      }
    }
    if (!f.chart.empty()) {
      write_charts(f, inputs);
      return 0;
    }
    if (f.format == "html") {
      run::write_text(f.output, report::html_report(inputs, report::parse_series_rule(f.series_by),
                                                    report::parse_chart_stat(f.stat)));
      return 0;
    }
    std::vector<report::RunResult> runs;
    for (report::CompareInput& input : inputs) {
      for (report::RunResult& r : input.runs) runs.push_back(std::move(r));
    }
    run::write_text(f.output, render(f.format, runs));
    return 0;
  };
}

}  // namespace servebench::cli
