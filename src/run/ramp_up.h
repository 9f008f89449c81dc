// File: run/ramp_up.h
// vLLM's ramp-up load shape during one point (vllm/benchmarks/serve.py: --ramp-up-strategy):
// the rate rises over the point's requests from the start to the end RPS, linearly or
// exponentially; schedule::arrival_times_ns makes the send times. Here: what vLLM prints and
// records about the ramp. docs/run.md describes the behaviour.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/client.h"
#include "report/report.h"
#include "schedule/schedule.h"

namespace servebench::run {

std::string ramp_up_traffic_lines(const schedule::RampUp& ramp_up);

// vLLM's rps_change_events: the start rate at t0, then every integer rate the ramp passes,
// stamped with the wall time at which the request whose rate reached it was due (vLLM stamps it
// as its schedule releases the request, before any --max-concurrency wait). Multi-turn: the
// ramp counts first turns only, as the schedule does. `wall_ns_at_t0`: core::wall_ns_at_mono of
// the run's t0.
std::vector<report::RpsChangeEvent> rps_change_events(
    const schedule::RampUp& ramp_up, const std::vector<client::PlannedRequest>& plan,
    int64_t wall_ns_at_t0);

// The result JSON's servebench "ramp_up" section: the ramp, how many requests it spans, and
// when the last of them was due.

}  // namespace servebench::run
