// File: cli/load_flags.h
// GuideLLM's load shapes as `servebench run` flags (--profile, --rate, --duration, warmup and
// cooldown windows, stop rules) turned into the spec's run::RunLimits. docs/run.md describes the
// behaviour. Internal to the cli part.
#pragma once

#include <string>

#include "cli/values.h"
#include "run/run.h"

namespace servebench::cli {

// As given; "" = not given.
struct LoadFlags {
  std::string profile{}, rate{}, duration{};
  std::string warmup{}, cooldown{}, warmup_number{}, warmup_duration{}, cooldown_number{},
      cooldown_duration{};
  std::string max_errors{}, max_error_rate{};
};
// Checks the flags against each other and vLLM's, and fills c.limits (and c.num_prompts when a
// rate × duration sizes the run). Throws core::Error kUsage naming the flag.
void apply_load_flags(const LoadFlags& f, const Given& given, run::Spec& c);

}  // namespace servebench::cli
