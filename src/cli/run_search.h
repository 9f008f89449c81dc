// File: cli/run_search.h
// `servebench run --search-slo "ttft:500,tpot:50"`: the highest request rate (or, with
// --search-concurrency, max concurrency) at which enough requests meet the SLOs, found by
// bracketing then bisection over a bounded number of runs (run_search.cpp, docs/run.md "SLO
// search"). run_command.cpp registers the flags and hands the validated RunConfig over.
// Internal to the cli part.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/run_config.h"

namespace CLI {
class App;
}

namespace servebench::cli::run {

struct SearchFlags {
  std::vector<std::string> slo;   // --search-slo items ("ttft:500,tpot:50" or "ttft:500 tpot:50")
  bool concurrency = false;       // --search-concurrency
  std::string attainment = "90";  // --search-attainment: % of requests within every SLO
  std::string max_runs = "8";     // --search-max-runs
};

// A validated search.
struct SearchPlan {
  std::map<std::string, double> slo_ms;  // metric → SLO (ms), as --goodput
  bool concurrency = false;
  double attainment = 0.9;  // fraction
  int max_runs = 8;
};

// Adds the --search-* flags to `run`'s parser; `flags` is filled when it parses.
void add_search_flags(CLI::App& run, const std::shared_ptr<SearchFlags>& flags);
// Whether `run` was given --search-slo; the other --search-* flags without it are refused.
bool search_requested(const CLI::App& run, const SearchFlags& flags);
// Checks the flags against the run's config; throws core::Error (kUsage) naming the flag.
SearchPlan validate_search(const SearchFlags& flags, const RunConfig& config);
// Runs the search (each probe a full run through execute_run, its result saved); returns the
// exit code (0 when the search finished, 130 after Ctrl-C).
int execute_search(RunConfig config, const SearchPlan& plan);

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

}  // namespace servebench::cli::run
