// File: cli/stage_flags.h
// inference-perf's load stages as `servebench run` flags: --stages RATE:DURATION,… (or the same
// as YAML/JSON, inline or in a file), --stage-arrival, --stage-interval, turned into the spec's
// stages. Internal to the cli part.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/values.h"
#include "run/run.h"
#include "schedule/schedule.h"

namespace servebench::cli {

// What --stages gives: the stages and, from a YAML/JSON form that says so (inference-perf's
// `load:` section with `type` and `interval`), the arrival and the pause between stages.
struct StagesSpec {
  std::vector<schedule::LoadStage> stages;
  std::optional<schedule::StageArrival> arrival;
  std::optional<double> interval_s;
};
// "1:60,5:60,10:60" (rate:duration in s); or YAML/JSON inline ("[{rate: 1, duration: 60}]")
// or the path of a YAML/JSON file, holding a list of {rate, duration}, a map with `stages`, or
// inference-perf's config with `load: {type, interval, stages}`. Throws core::Error (kUsage,
// --stages; kInput naming the file) on bad input.
StagesSpec parse_stages(const std::string& text);
// "constant" or "poisson" (inference-perf's load.type).
schedule::StageArrival parse_stage_arrival(const std::string& text);

struct StageFlags {
  std::string stages, arrival, interval;  // as given; "" = not given
};
// Checks --stages against the other flags and fills c.stages, c.stage_arrival,
// c.stage_interval_s, c.request_rates (the stages' rates, one point each) and c.num_prompts (the
// largest stage's count). Throws core::Error kUsage naming the flag.
void apply_stage_flags(const StageFlags& f, const Given& given, run::Spec& c);

}  // namespace servebench::cli
