// vLLM's ramp-up flags (ramp_up_flags.h), checked as vLLM's main_async checks them.
#include "cli/ramp_up_flags.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace servebench::cli {

void apply_ramp_up_flags(const RampUpFlags& f, const Given& given, run::Spec& c) {
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

}  // namespace servebench::cli
