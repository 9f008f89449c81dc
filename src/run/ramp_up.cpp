// vLLM's ramp-up (ramp_up.h). vLLM (vllm/benchmarks/serve.py) prints the two traffic lines and
// collects rps_change_events in benchmark(): the start rate when the benchmark starts, then, as
// each request is issued, one event per integer rate from the last one up to int(the request's
// rate).
#include "run/ramp_up.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.h"

namespace servebench::run {
namespace {

bool first_turn(const client::PlannedRequest& p) {
  return p.turn == 0;
}

}  // namespace

std::string ramp_up_traffic_lines(const schedule::RampUp& ramp_up) {
  return fmt::format(
      "Traffic ramp-up strategy: {}.\n"
      "Will increase RPS from {} to {} RPS over the duration of the benchmark.\n",
      schedule::ramp_up_strategy_name(ramp_up.strategy), ramp_up.start_rps, ramp_up.end_rps);
}

std::vector<report::RpsChangeEvent> rps_change_events(
    const schedule::RampUp& ramp_up, const std::vector<client::PlannedRequest>& plan,
    int64_t wall_ns_at_t0) {
  const auto ramped = static_cast<size_t>(std::count_if(plan.begin(), plan.end(), first_turn));
  std::vector<report::RpsChangeEvent> events;
  int64_t last_rps = ramp_up.start_rps;
  events.push_back({last_rps, core::local_iso_timestamp(wall_ns_at_t0)});
  for (size_t i = 0, k = 0; i < plan.size(); ++i) {
    if (!first_turn(plan[i])) continue;
    // int() in vLLM: truncated toward zero.
    const auto rps = static_cast<int64_t>(schedule::ramp_up_rate(ramp_up, k++, ramped));
    if (rps <= last_rps) continue;
    const std::string timestamp = core::local_iso_timestamp(wall_ns_at_t0 + plan[i].intended_ns);
    for (int64_t value = last_rps + 1; value <= rps; ++value) events.push_back({value, timestamp});
    last_rps = rps;
  }
  return events;
}

}  // namespace servebench::run
