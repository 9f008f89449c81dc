// `servebench report FILE|DIR…`: lays finished results (servebench's or vLLM's --save-result
// JSON) out in one of the seed layouts. docs/reports.md describes each layout.
#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_io.h"
#include "core/error.h"
#include "report/tables.h"

namespace servebench::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> inputs;
  std::string format = "vllm-md";
  std::string output;
};

const char* const kFormats =
    "vllm-md (vLLM suite table, tabulate layout), vllm-md-aligned (the same, padded cells), "
    "vllm-json (pandas JSON), concurrency, guidellm, inference-perf, csv";

std::string render(const std::string& format, std::span<const report::RunResult> runs) {
  if (format == "vllm-md") {
    return report::vllm_serving_markdown(runs, report::MarkdownStyle::kTabulate);
  }
  if (format == "vllm-md-aligned") {
    return report::vllm_serving_markdown(runs, report::MarkdownStyle::kAligned);
  }
  if (format == "vllm-json") return report::vllm_pandas_json(runs) + "\n";
  if (format == "concurrency") return report::concurrency_markdown(runs);
  if (format == "guidellm") return report::guidellm_tables(runs);
  if (format == "inference-perf") return report::inference_perf_stages_markdown(runs);
  if (format == "csv") return report::figures_csv(runs);
  throw core::Error(core::ErrorKind::kUsage, "--format",
                    "'" + format + "' is not a layout; one of: " + kFormats);
}

}  // namespace

Action add_report_command(CLI::App& app) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* sub = app.add_subcommand(
      "report", "Lay result files (servebench's or vLLM's --save-result JSON) out as tables");
  sub->add_option("inputs", flags->inputs, "Result files, or directories of *.json results")
      ->required();
  sub->add_option("--format", flags->format, std::string("Layout: ") + kFormats)
      ->capture_default_str();
  sub->add_option("--output", flags->output, "Write here instead of stdout");
  return [flags]() -> int {
    std::vector<report::RunResult> runs;
    for (const std::string& input : flags->inputs) {
      for (report::RunResult& r : report::load_runs(input)) runs.push_back(std::move(r));
    }
    write_report(flags->output, render(flags->format, runs));
    return 0;
  };
}

}  // namespace servebench::cli
