// File: cli/run_targets.h
// Several endpoints benchmarked at the same time in one `servebench run` (seed 001: two servers
// sharing one GPU): a --base-url list (or --sim-instances N embedded simulators) gives N
// targets; each runs its own copy of the run in its own thread (own prompts from its own seed,
// own client, records and result file), all sending from one common t0, and each prints its own
// vLLM block; a combined block adds them up over the common wall time. docs/run.md describes
// the behaviour. Internal to the cli part.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_config.h"

namespace servebench::cli::run {

// --base-url as given: a comma list, or the flag repeated (CLI11 joins the values with '\n').
// Each URL loses its trailing '/'; a URL not starting with http:// or https://, or an empty
// item, is a usage error naming --base-url (the URL shown without its credentials).
std::vector<std::string> parse_base_urls(const std::string& text);

// Fills c.sim_instances and c.target_models after the target and simulator flags are checked
// (c.target_urls, c.embedded and c.model set): --model "a,b" names one model per target (or one
// for all); several targets refuse a --request-rate / --max-concurrency list. Throws
// core::Error kUsage naming the flag.
void apply_target_flags(const std::string& sim_instances,
                        const std::function<bool(const char*)>& given, RunConfig& c);

// Whether the run has more than one target (and is not one target's own run).
bool runs_several_targets(const RunConfig& c);

// Target `index`'s own config: its URL (or an embedded simulator), model, seed (--seed +
// index, for its dataset, arrival times and simulator), label ("<label>-target<index+1>", which
// names its result file) and explicitly named files with the same suffix.
RunConfig target_config(const RunConfig& c, size_t index);

// Runs every target (execute_run on each target's config, in a thread each), then prints the
// combined block. Returns the largest exit code of the targets (130 after SIGINT). Throws the
// first target's core::Error when one failed (a failure before the start stops every target
// before anything is sent; after it, the others still report).
int run_targets(const RunConfig& c);

// The servebench "target" section of one target's result JSON.
nlohmann::json target_json(const RunConfig& target);

// The combined figures of the targets' results (vLLM result objects, each timed from the same
// t0): sums of completed, failed and tokens; the wall time is the longest duration; throughputs
// are the sums over the wall time.
struct CombinedFigures {
  size_t targets = 0;
  int64_t completed = 0, failed = 0, input_tokens = 0, output_tokens = 0;
  double wall_s = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
};
CombinedFigures combine_results(const std::vector<nlohmann::json>& results);
// The combined figures as saved beside the targets' results (`<label>-<date>.combined.json`
// with --save-result): the figures, and each target's name, URL and result file.
nlohmann::json combined_json(const CombinedFigures& combined,
                             const std::vector<nlohmann::json>& results);
// The labelled console block of the combined figures and a per-target table.
std::string combined_console_block(const CombinedFigures& combined,
                                   const std::vector<nlohmann::json>& results);

}  // namespace servebench::cli::run
