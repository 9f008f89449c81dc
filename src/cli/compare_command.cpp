// `servebench compare A B …`: runs or suites side by side, each figure with its difference from
// and ratio to the first input (the baseline). Inputs are result files or directories of them.
#include <CLI/CLI.hpp>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_io.h"
#include "core/error.h"
#include "report/tables.h"
#include "run/names.h"

namespace servebench::cli {
namespace {

struct CompareFlags {
  std::vector<std::string> inputs;
  std::string format = "md";
  std::string metrics;
  std::string match = "name";
  std::string names;
  std::string output;
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

}  // namespace

Action add_compare_command(CLI::App& app) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare runs or suites side by side with differences and ratios to the first");
  sub->add_option("inputs", flags->inputs,
                  "Baseline, then the others: result files or directories of *.json results")
      ->required();
  sub->add_option("--format", flags->format, "md, csv or json")->capture_default_str();
  sub->add_option("--metrics", flags->metrics,
                  "Comma-separated result keys (default: throughputs and TTFT/TPOT/ITL/E2EL "
                  "mean, median, p99)");
  sub->add_option("--match", flags->match,
                  "Pair a suite's runs by test name (name) or by sorted position (order)")
      ->capture_default_str();
  sub->add_option("--names", flags->names, "Comma-separated column names, one per input");
  sub->add_option("--output", flags->output, "Write here instead of stdout");
  return [flags]() -> int {
    const CompareFlags& f = *flags;
    if (f.inputs.size() < 2) usage("inputs", "compare needs at least two inputs");
    report::CompareFormat format = report::CompareFormat::kMarkdown;
    if (f.format == "csv") {
      format = report::CompareFormat::kCsv;
    } else if (f.format == "json") {
      format = report::CompareFormat::kJson;
    } else if (f.format != "md") {
      usage("--format", "'" + f.format + "' is not one of md, csv, json");
    }
    if (f.match != "name" && f.match != "order") {
      usage("--match", "'" + f.match + "' is not one of name, order");
    }
    const std::vector<std::string> names = split_commas(f.names);
    if (!f.names.empty() && names.size() != f.inputs.size()) {
      usage("--names", "gives " + std::to_string(names.size()) + " names for " +
                           std::to_string(f.inputs.size()) + " inputs");
    }
    std::vector<report::CompareInput> inputs;
    std::set<std::string> used;
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      std::string name = names.empty() ? input_name(f.inputs[i]) : names[i];
      if (!used.insert(name).second) name = f.inputs[i];  // two "results" dirs: use the paths
      used.insert(name);
      inputs.push_back({name, report::load_runs(f.inputs[i])});
    }
    const auto match =
        f.match == "order" ? report::CompareMatch::kByOrder : report::CompareMatch::kByName;
    run::write_text(f.output, report::compare_runs(inputs, split_commas(f.metrics), match, format));
    return 0;
  };
}

}  // namespace servebench::cli
