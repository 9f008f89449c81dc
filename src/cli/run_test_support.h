// File: cli/run_test_support.h
// What the `servebench run` flag tests share. Test-only.
#pragma once

#include <limits>

#include "cli/run_config.h"

namespace servebench::cli::run {

// What run_command.cpp leaves before the load flags (--profile, --ramp-up-*) are applied:
// vLLM's defaults, on the random dataset.
inline RunConfig vllm_default_config() {
  RunConfig c;
  c.dataset.name = "random";
  c.num_prompts = 1000;
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.request_rate = c.request_rates.front();
  c.max_concurrencies = {0};
  return c;
}

}  // namespace servebench::cli::run
