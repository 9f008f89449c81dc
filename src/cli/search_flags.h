// File: cli/search_flags.h
// `servebench run --search-slo` and its --search-* flags, turned into the spec's search plan.
// Internal to the cli part.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "run/run.h"

namespace CLI {
class App;
}

namespace servebench::cli {

struct SearchFlags {
  std::vector<std::string> slo;   // --search-slo items ("ttft:500,tpot:50" or "ttft:500 tpot:50")
  bool concurrency = false;       // --search-concurrency
  std::string attainment = "90";  // --search-attainment: % of requests within every SLO
  std::string max_runs = "8";     // --search-max-runs
};

// Adds the --search-* flags to `run`'s parser; `flags` is filled when it parses.
void add_search_flags(CLI::App& run, const std::shared_ptr<SearchFlags>& flags);
// Whether `run` was given --search-slo; the other --search-* flags without it are refused.
bool search_requested(const CLI::App& run, const SearchFlags& flags);
// Checks the flags against the run's spec; throws core::Error (kUsage) naming the flag.
run::SearchPlan validate_search(const SearchFlags& flags, const run::Spec& config);

}  // namespace servebench::cli
