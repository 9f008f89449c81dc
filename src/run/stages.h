// File: run/stages.h
// Planning inference-perf's load stages (seed 003): one point per stage, in order, each with its
// own result ("stage_<i>"), the next stage starting when the previous one's requests have all
// ended and --stage-interval has passed. The send times come from schedule::stage_times_ns
// (send_times.h). docs/run.md describes the behaviour.
#pragma once

#include <atomic>
#include <string>

#include "run/run.h"
#include "schedule/schedule.h"

namespace servebench::run {

// inference-perf's name of stage `index`: "stage_0", "stage_1", …
std::string stage_name(int index);
// Makes `point` (a copy of the run's config) the run of stage `index`: its rate, its request
// count, and a result file name with the stage in it ("<label>-stage_<i>-<rate>qps-…"; the
// index zero-padded when there are more than 10 stages, so that a directory lists them in
// order), unless --result-filename named the file (allowed with a single stage).
void enter_stage(Spec& point, size_t index, const std::string& model_id, const std::string& date);
// Console lines naming the stage run (printed instead of the rate and burstiness lines).
std::string stage_traffic_lines(const Spec& point);
// Waits --stage-interval after stage `done - 1` when another follows (returns early on SIGINT
// or SIGTERM).
void pause_between_stages(const Spec& c, size_t done);
// inference-perf's load.type: "constant" or "poisson".
const char* stage_arrival_name(schedule::StageArrival a);

}  // namespace servebench::run
