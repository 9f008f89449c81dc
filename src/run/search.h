// File: run/search.h
// Planning `--search-slo "ttft:500,tpot:50"`: the highest request rate (or, with
// --search-concurrency, max concurrency) at which enough requests meet the SLOs, found by
// bracketing then bisection over a bounded number of points (docs/run.md "SLO search").
#pragma once

#include <optional>
#include <vector>

#include "run/run.h"

namespace servebench::run {

// Runs the search (each probe a full sweep of one point, its result saved); returns the exit
// code (0 when the search finished, 130 after Ctrl-C). spec.search must be set.
int execute_search(Spec spec);

// The search itself, apart from running: given whether a load meets the SLOs, the next load to
// probe (nullopt: done). Loads probed so far are in `probes` (load, met). Rates bracket by
// doubling/halving from `start` then bisect until the bracket is within 5% (rates) or adjacent
// (concurrency, whole numbers ≥ 1).
struct Probe {
  double load;
  bool met;
};
std::optional<double> next_load(const std::vector<Probe>& probes, double start, bool whole);
// The answer: the highest load that met the SLOs (nullopt when none did).
std::optional<double> best_load(const std::vector<Probe>& probes);

}  // namespace servebench::run
