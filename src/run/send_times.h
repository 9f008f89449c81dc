// File: run/send_times.h
// The plan of one point: each request's prompt and intended send time, by the point's load
// shape: vLLM's arrivals (or a ramp-up, or a trace's timestamps), a GuideLLM strategy within
// --duration, or an inference-perf stage.
#pragma once

#include <cstdint>
#include <vector>

#include "client/client.h"
#include "dataset/dataset.h"
#include "run/run.h"

namespace servebench::run {

// Request i due at times[i] with prompt i % prompts.size() (reused in turn when there are more
// times than prompts); a multi-turn prompt's later turn follows the request before it.
std::vector<client::PlannedRequest> plan_at(const std::vector<int64_t>& times,
                                            const std::vector<dataset::Prompt>& prompts);

// The prompts with their intended send times at this point's rate (the same prompts for every
// point of a sweep, as vLLM's suite reuses its seed). `not_due` (when given) gets the number of
// requests asked for that --duration ends before they are due (bounded_plan).
std::vector<client::PlannedRequest> make_plan(const Spec& c,
                                              const std::vector<dataset::Prompt>& prompts,
                                              size_t* not_due = nullptr);

// The plan of a point bounded by --duration or shaped by --profile (not a trace): the arrival
// times of its strategy within the duration, at most limits.max_requests, prompts reused
// cyclically when the plan is longer than the dataset. `not_due` (when given): how many of the
// --num-prompts requests asked for fall at or after the duration's end; they are never sent, and
// the result counts them as not_sent.
std::vector<client::PlannedRequest> bounded_plan(const Spec& c,
                                                 const std::vector<dataset::Prompt>& prompts,
                                                 size_t* not_due = nullptr);

// The plan of a stage point: the stage's send times, the prompts in order (reused from the start
// when the dataset gave fewer).
std::vector<client::PlannedRequest> stage_plan(const Spec& point,
                                               const std::vector<dataset::Prompt>& prompts);

}  // namespace servebench::run
