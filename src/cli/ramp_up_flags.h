// File: cli/ramp_up_flags.h
// vLLM's ramp-up as `servebench run` flags (vllm/benchmarks/serve.py: --ramp-up-strategy,
// --ramp-up-start-rps, --ramp-up-end-rps), turned into the spec's ramp. Internal to the cli
// part.
#pragma once

#include <string>

#include "cli/values.h"
#include "run/run.h"

namespace servebench::cli {

struct RampUpFlags {
  std::string strategy, start_rps, end_rps;  // as given; "" = not given
};
// Checks the flags as vLLM's main_async does, and refuses a linear start of 0 too (vLLM accepts
// it, then fails its own assertion on request 0); sets c.ramp_up. Other load shapes refuse
// --ramp-up-strategy where they are checked (trace datasets, --profile, --duration, --stages,
// --search-slo). Throws core::Error kUsage naming the flag.
void apply_ramp_up_flags(const RampUpFlags& f, const Given& given, run::Spec& c);

}  // namespace servebench::cli
