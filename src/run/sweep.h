// File: run/sweep.h
// Planning one target's points: set up what they share once (tokenizer, target, prompts, the
// initial test request, which /metrics to scrape), then execute each point the sequence
// (sequence.h) or the stages (stages.h) give, in order, and print them side by side.
#pragma once

#include <string>

#include "run/run.h"

namespace servebench::run {

// Runs every point of `spec` on its one target; returns the exit code (0 when it finished, even
// with failed requests; 130 after SIGINT).
int run_sweep(Spec spec);

// The warning printed when requests carry no temperature (`what` names the run or the tests
// that give none), one line.
std::string no_temperature_warning(const std::string& what);

}  // namespace servebench::run
