// File: cli/run_test_support.h
// What the `servebench run` flag tests share. Test-only.
#pragma once

#include <limits>

#include "run/run.h"

namespace servebench::cli {

// What run_flag_checks.cpp leaves before the load flags (--profile, --ramp-up-*) are applied:
// vLLM's defaults, on the random dataset.
inline run::Spec vllm_default_config() {
  run::Spec c;
  c.dataset.name = "random";
  c.num_prompts = 1000;
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.request_rate = c.request_rates.front();
  c.max_concurrencies = {0};
  return c;
}

}  // namespace servebench::cli
