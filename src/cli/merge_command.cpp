// `servebench merge DIR…`: one run's shard results (or, with --runs, independent runs) combined
// into one result from the union of their per-request records (merge/merge.h,
// docs/scale-out.md). The output is vLLM's result JSON, so every `report` layout reads it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "merge/merge.h"
#include "run/names.h"

namespace servebench::cli {
namespace {

struct MergeFlags {
  std::vector<std::string> inputs;
  std::string output = "merged.json";
  std::string records;
  bool partial = false;
  bool runs = false;
  bool save_detailed = false;
  std::string metric_percentiles;
  std::string percentile_metrics;
  std::vector<std::string> goodput;
};

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

void write_records(const std::string& path, const std::vector<record::RequestRecord>& records) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const auto& r : records) out << record::to_json_line(r) << '\n';
  out.close();
  if (!out) throw core::Error(core::ErrorKind::kInput, "--records", "cannot write '" + path + "'");
}

}  // namespace

Action add_merge_command(CLI::App& app) {
  auto flags = std::make_shared<MergeFlags>();
  CLI::App* sub = app.add_subcommand(
      "merge", "Merge the shards of one run (run --shard K/N) into one result, from their records");
  sub->add_option("inputs", flags->inputs,
                  "Shard result files, or directories searched for them (servebench.shard)")
      ->required();
  sub->add_option("-o,--output", flags->output, "Merged result JSON")->capture_default_str();
  sub->add_option("--records", flags->records,
                  "Also write the merged per-request records (JSONL, one timeline) here");
  sub->add_flag("--partial", flags->partial,
                "Merge the shards present when some are missing (the result says which)");
  sub->add_flag("--runs", flags->runs,
                "The inputs are independent runs, not shards of one plan: no plan check, their "
                "loads add up, each run's t0 aligned");
  sub->add_flag("--save-detailed", flags->save_detailed,
                "Write the per-request arrays (default: when every input has them)");
  sub->add_option("--metric-percentiles", flags->metric_percentiles,
                  "Percentiles, e.g. 50,90,99 (default: those of the shards' results)");
  sub->add_option("--percentile-metrics", flags->percentile_metrics,
                  "ttft,tpot,itl,e2el (default: those of the shards' results)");
  sub->add_option("--goodput", flags->goodput, "SLOs as KEY:VALUE in ms (ttft, tpot, e2el)");
  return [flags]() -> int {
    const MergeFlags& f = *flags;
    merge::Options options;
    options.partial = f.partial;
    options.runs = f.runs;
    if (f.save_detailed) options.detailed = true;
    if (!f.metric_percentiles.empty())
      options.percentiles = metrics::parse_percentiles(f.metric_percentiles);
    if (!f.percentile_metrics.empty())
      options.percentile_metrics = comma_list(f.percentile_metrics);
    if (!f.goodput.empty()) options.goodput_slo_ms = metrics::parse_goodput(f.goodput);
    merge::Merged m = merge::merge(merge::load_inputs(f.inputs, f.runs), options);
    if (!f.records.empty()) {
      write_records(f.records, m.records);
      m.result["servebench"]["records_file"] = f.records;
    }
    m.result["servebench"]["result_file"] = f.output;
    std::fputs(report::vllm_console_block(m.summary, m.info).c_str(), stdout);
    std::fputs(report::extras_console_block(m.summary).c_str(), stdout);
    std::fputs(merge::shard_table(m.result["servebench"]["merge"]).c_str(), stdout);
    run::write_text(f.output, m.result.dump(2) + "\n");
    std::printf("merged %zu inputs into %s\n", m.result["servebench"]["merge"]["shards"].size(),
                f.output.c_str());
    if (!m.missing.empty())
      std::fprintf(stderr, "servebench: merge: partial: %zu shard(s) missing\n", m.missing.size());
    return 0;
  };
}

}  // namespace servebench::cli
