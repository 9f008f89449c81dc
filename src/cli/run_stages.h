// File: cli/run_stages.h
// inference-perf's load stages in `servebench run` (seed 003): --stages RATE:DURATION,… (or the
// same as YAML/JSON, inline or in a file) runs one benchmark per stage, in order, each a sweep
// point of run_execute.cpp with its own result ("stage_<i>"), the next stage starting when the
// previous one's requests have all ended and --stage-interval has passed. The send times come
// from schedule::stage_times_ns. docs/run.md describes the behaviour. Internal to the cli part.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_config.h"
#include "client/client.h"
#include "dataset/dataset.h"
#include "schedule/schedule.h"

namespace servebench::cli::run {

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
// c.stage_interval_s, c.request_rates (the stages' rates, one run each) and c.num_prompts (the
// largest stage's count). Throws core::Error kUsage naming the flag.
void apply_stage_flags(const StageFlags& f, const std::function<bool(const char*)>& given,
                       RunConfig& c);

// inference-perf's name of stage `index`: "stage_0", "stage_1", …
std::string stage_name(int index);
// Makes `point` (a copy of the run's config) the run of stage `index`: its rate, its request
// count, and a result file name with the stage in it ("<label>-stage_<i>-<rate>qps-…"; the
// index zero-padded when there are more than 10 stages, so that a directory lists them in
// order), unless --result-filename named the file (allowed with a single stage).
void enter_stage(RunConfig& point, size_t index, const std::string& model_id,
                 const std::string& date);
// The plan of a stage run: the stage's send times, the prompts in order (reused from the start
// when the dataset gave fewer).
std::vector<client::PlannedRequest> stage_plan(const RunConfig& point,
                                               const std::vector<dataset::Prompt>& prompts);
// Console lines naming the stage run (printed instead of the rate and burstiness lines).
std::string stage_traffic_lines(const RunConfig& point);
// The result JSON's servebench "stage" section.
nlohmann::json stage_json(const RunConfig& point);
// Waits --stage-interval after stage `done - 1` when another follows (returns early on stop).
void pause_between_stages(const RunConfig& c, size_t done, const std::atomic<bool>& stop);

}  // namespace servebench::cli::run
