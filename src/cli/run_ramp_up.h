// File: cli/run_ramp_up.h
// vLLM's ramp-up load shape in `servebench run` (vllm/benchmarks/serve.py: --ramp-up-strategy,
// --ramp-up-start-rps, --ramp-up-end-rps): the rate rises over the run's requests from the start
// to the end RPS, linearly or exponentially; schedule::arrival_times_ns makes the send times.
// Here: the flags, and what vLLM prints and saves about the ramp. docs/run.md describes the
// behaviour. Internal to the cli part.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_config.h"
#include "client/client.h"
#include "report/report.h"
#include "schedule/schedule.h"

namespace servebench::cli::run {

struct RampUpFlags {
  std::string strategy, start_rps, end_rps;  // as given; "" = not given
};
// Checks the flags as vLLM's main_async does, and refuses a linear start of 0 too (vLLM accepts
// it, then fails its own assertion on request 0); sets c.ramp_up. Other load shapes refuse
// --ramp-up-strategy where they are checked (trace datasets, --profile, --duration, --stages,
// --search-slo). Throws core::Error kUsage naming the flag.
void apply_ramp_up_flags(const RampUpFlags& f, const std::function<bool(const char*)>& given,
                         RunConfig& c);

// vLLM's two console lines, printed instead of "Traffic request rate: …".
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
nlohmann::json ramp_up_json(const schedule::RampUp& ramp_up,
                            const std::vector<client::PlannedRequest>& plan);

}  // namespace servebench::cli::run
