// vLLM's ramp-up in `servebench run` (run_ramp_up.h). vLLM (vllm/benchmarks/serve.py) checks the
// flags in main_async, prints the two traffic lines and collects rps_change_events in benchmark():
// the start rate when the benchmark starts, then, as each request is issued, one event per
// integer rate from the last one up to int(the request's rate).
#include "cli/run_ramp_up.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/run_support.h"
#include "core/clock.h"

namespace servebench::cli::run {
namespace {

bool first_turn(const client::PlannedRequest& p) {
  return p.turn == 0;
}

}  // namespace

void apply_ramp_up_flags(const RampUpFlags& f, const std::function<bool(const char*)>& given,
                         RunConfig& c) {
  if (!given("--ramp-up-strategy")) {
    for (const char* flag : {"--ramp-up-start-rps", "--ramp-up-end-rps"})
      if (given(flag)) usage(flag, "applies only with --ramp-up-strategy (linear or exponential)");
    return;
  }
  schedule::RampUp ramp_up;
  if (f.strategy == "linear") {
    ramp_up.strategy = schedule::RampUpStrategy::kLinear;
  } else if (f.strategy == "exponential") {
    ramp_up.strategy = schedule::RampUpStrategy::kExponential;
  } else {
    usage("--ramp-up-strategy", "unknown strategy '" + f.strategy + "'; use linear or exponential");
  }
  // vLLM refuses any --request-rate but its default, inf.
  const bool default_rate = c.request_rates.size() == 1 && std::isinf(c.request_rates.front());
  if (given("--request-rate") && !default_rate) {
    usage("--request-rate",
          "the request rate is controlled by the ramp-up flags; drop --request-rate");
  }
  for (const char* flag : {"--ramp-up-start-rps", "--ramp-up-end-rps"})
    if (!given(flag)) usage(flag, "is required with --ramp-up-strategy");
  ramp_up.start_rps = parse_int("--ramp-up-start-rps", f.start_rps, 0, 10'000'000);
  ramp_up.end_rps = parse_int("--ramp-up-end-rps", f.end_rps, 0, 10'000'000);
  if (ramp_up.start_rps > ramp_up.end_rps) {
    usage("--ramp-up-start-rps", fmt::format("must not exceed --ramp-up-end-rps ({} > {})",
                                             ramp_up.start_rps, ramp_up.end_rps));
  }
  if (ramp_up.start_rps == 0) {
    if (ramp_up.strategy == schedule::RampUpStrategy::kExponential)
      usage("--ramp-up-start-rps", "cannot be 0 for the exponential strategy");
    usage("--ramp-up-start-rps",
          "must be at least 1: at 0 RPS the first request is never due (vLLM accepts 0 and then "
          "fails on request 0)");
  }
  c.ramp_up = ramp_up;
  c.request_rates = {std::numeric_limits<double>::infinity()};
  c.request_rate = c.request_rates.front();
}

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

nlohmann::json ramp_up_json(const schedule::RampUp& ramp_up,
                            const std::vector<client::PlannedRequest>& plan) {
  int64_t last_due_ns = 0;
  size_t requests = 0;
  for (const client::PlannedRequest& p : plan) {
    if (!first_turn(p)) continue;
    ++requests;
    last_due_ns = std::max(last_due_ns, p.intended_ns);
  }
  return {{"strategy", schedule::ramp_up_strategy_name(ramp_up.strategy)},
          {"start_rps", ramp_up.start_rps},
          {"end_rps", ramp_up.end_rps},
          {"requests", requests},
          {"last_due_s", static_cast<double>(last_due_ns) / 1e9}};
}

}  // namespace servebench::cli::run
