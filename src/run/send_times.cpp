#include "run/send_times.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "run/names.h"
#include "schedule/schedule.h"

namespace servebench::run {

std::vector<client::PlannedRequest> plan_at(const std::vector<int64_t>& times,
                                            const std::vector<dataset::Prompt>& prompts) {
  std::vector<client::PlannedRequest> plan(times.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const dataset::Prompt& p = prompts[i % prompts.size()];
    plan[i].index = i;
    plan[i].intended_ns = times[i];
    plan[i].prompt = p.text;
    plan[i].prompt_tokens = p.prompt_tokens;
    plan[i].max_tokens = p.output_tokens;
    plan[i].conversation = p.conversation;
    plan[i].turn = p.turn;
    if (p.turn > 0) plan[i].follows = static_cast<int64_t>(i) - 1;  // turns are in order
  }
  return plan;
}

std::vector<client::PlannedRequest> make_plan(const Spec& c,
                                              const std::vector<dataset::Prompt>& prompts,
                                              size_t* not_due) {
  if (not_due != nullptr) *not_due = 0;
  if (c.stage_index >= 0) return stage_plan(c, prompts);  // --stages
  if (c.limits.bounds_plan() && !c.self_timed)
    return bounded_plan(c, prompts, not_due);  // --duration / --profile
  std::vector<int64_t> times;
  if (c.self_timed) {
    std::vector<int64_t> offsets(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) offsets[i] = prompts[i].trace_offset_ns;
    times = schedule::trace_times_ns(offsets, c.trace_time_scale);
  } else {
    schedule::ArrivalOptions arrivals;
    arrivals.request_rate = c.request_rate;
    arrivals.burstiness = c.burstiness;
    arrivals.seed = c.seed;
    arrivals.numpy_words_before = c.numpy_words_drawn;
    arrivals.ramp_up = c.ramp_up;
    // Multi-turn: the arrivals (and a ramp-up's requests) are the conversations' first turns; a
    // later turn is sent when the turn before it ends (client.h).
    const size_t first_turns = static_cast<size_t>(std::count_if(
        prompts.begin(), prompts.end(), [](const dataset::Prompt& p) { return p.turn == 0; }));
    const std::vector<int64_t> starts = schedule::arrival_times_ns(first_turns, arrivals);
    for (size_t i = 0, next = 0; i < prompts.size(); ++i)
      times.push_back(prompts[i].turn == 0 ? starts[next++] : times.back());
  }
  return plan_at(times, prompts);
}

// Every request in flight holds a socket (two with the embedded simulator, which serves from
// the same process). Past the open-files limit, requests fail with "Couldn't connect": say so
// before the run rather than leave the user to guess from the failures.

std::vector<client::PlannedRequest> bounded_plan(const Spec& c,
                                                 const std::vector<dataset::Prompt>& prompts,
                                                 size_t* not_due) {
  if (not_due != nullptr) *not_due = 0;
  if (prompts.empty()) throw core::Error(core::ErrorKind::kInput, "--dataset-name", "no prompts");
  const RunLimits& L = c.limits;
  size_t cap = L.max_requests > 0 ? L.max_requests : prompts.size();
  const double rate = c.request_rate;
  std::vector<int64_t> times;
  if (std::isinf(rate)) {
    times.assign(cap, 0);  // as fast as the concurrency allows, until the duration or the cap
  } else {
    // A sweep's constant rates are known only now: without --num-prompts, rate × duration.
    if (L.duration_s > 0 && !L.max_requests_given)
      cap = schedule::requests_within(rate, L.duration_s);
    if (L.strategy == LoadProfile::kConstant) {
      times = schedule::constant_times_ns(rate, L.duration_s, cap);
    } else if (L.strategy == LoadProfile::kPoisson) {
      times = schedule::poisson_times_ns(rate, L.duration_s, cap, c.seed);
    } else {
      // vLLM's arrivals for rate × duration requests (at most the cap), those due in time.
      const size_t n =
          L.duration_s > 0 ? std::min(cap, schedule::requests_within(rate, L.duration_s)) : cap;
      times = schedule::arrival_times_ns(n, {.request_rate = rate,
                                             .burstiness = c.burstiness,
                                             .seed = c.seed,
                                             .numpy_words_before = c.numpy_words_drawn});
      if (L.duration_s > 0) {
        const int64_t end_ns = std::llround(L.duration_s * 1e9);
        std::erase_if(times, [&](int64_t t) { return t >= end_ns; });
      }
    }
  }
  if (times.empty())
    throw core::Error(core::ErrorKind::kUsage, "--duration",
                      fmt::format("no request is due within {} s at --request-rate {}",
                                  python_float(L.duration_s), python_float(rate)));
  // Asked for but due after the duration's end: --num-prompts N at a rate that sends fewer
  // within --duration (vLLM's arrivals or GuideLLM's rates). Without --num-prompts nothing was
  // asked for past the duration. An infinite rate plans them all; the client then leaves the
  // unsent ones (point.cpp counts those).
  if (not_due != nullptr && L.duration_s > 0 && L.max_requests_given && cap > times.size())
    *not_due = cap - times.size();
  return plan_at(times, prompts);  // prompts reused in turn
}

std::vector<client::PlannedRequest> stage_plan(const Spec& point,
                                               const std::vector<dataset::Prompt>& prompts) {
  if (prompts.empty())
    throw core::Error(core::ErrorKind::kInput, "--stages", "the dataset gave no prompts");
  const schedule::LoadStage& stage = point.stages.at(static_cast<size_t>(point.stage_index));
  // Each stage its own seeded times (--seed + stage index); the same prompts from the start,
  // as inference-perf's workers ask the data generator for request 0, 1, … in every stage.
  const std::vector<int64_t> times = schedule::stage_times_ns(
      stage, point.stage_arrival, point.seed + static_cast<uint64_t>(point.stage_index));
  return plan_at(times, prompts);
}

}  // namespace servebench::run
