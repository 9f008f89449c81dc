// File: run/targets.h
// Planning several endpoints benchmarked at the same time (seed 001: two servers sharing one
// GPU): a --base-url list (or --sim-instances N embedded simulators) gives N targets; each runs
// its own copy of the sweep in its own thread (own prompts from its own seed, own client,
// records and result file), all sending from one common t0, and each prints its own vLLM block;
// a combined block adds them up over the common wall time. docs/run.md describes the behaviour.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/result_json.h"
#include "run/run.h"

namespace servebench::run {

// Target `index`'s own config: its URL (or an embedded simulator), model, seed (--seed +
// index, for its dataset, arrival times and simulator), label ("<label>-target<index+1>", which
// names its result file) and explicitly named files with the same suffix.
Spec target_config(const Spec& c, size_t index);

// Runs every target (run_sweep on each target's config, in a thread each), then prints the
// combined block. Returns the largest exit code of the targets (130 after SIGINT). Throws the
// first target's core::Error when one failed (a failure before the start stops every target
// before anything is sent; after it, the others still report).
int run_targets(const Spec& c);

// The combined figures of the targets' results (vLLM result objects, each timed from the same
// t0): sums of completed, failed and tokens; the wall time is the longest duration; throughputs
// are the sums over the wall time.
CombinedFigures combine_results(const std::vector<nlohmann::json>& results);
// The labelled console block of the combined figures and a per-target table.
std::string combined_console_block(const CombinedFigures& combined,
                                   const std::vector<nlohmann::json>& results);

}  // namespace servebench::run
