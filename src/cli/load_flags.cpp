// GuideLLM's load flags (guidellm/benchmark/profile.py, guidellm/scheduler/constraints.py,
// guidellm/benchmark/aggregator.py) checked and turned into the spec (load_flags.h).
#include "cli/load_flags.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "run/names.h"
#include "schedule/schedule.h"

namespace servebench::cli {
namespace {

double positive_finite(const std::string& flag, const std::string& text) {
  const double v = parse_double(flag, text);
  if (!(v > 0) || std::isinf(v)) usage(flag, "must be a positive number, got " + text);
  return v;
}

// --warmup / --cooldown as GuideLLM's aggregator reads them: a value in (0, 1) is a share of
// the run; a value >= 1 is both a request count and a number of seconds (_is_in_warmup:
// `processed_requests < warmup` or `targeted_start - start_time < warmup`).
metrics::TransientWindow guidellm_window(const std::string& flag, const std::string& text) {
  const double v = parse_double(flag, text);
  if (!(v >= 0) || std::isinf(v))
    usage(flag, "must be a fraction in (0, 1) or a count/seconds >= 1, got " + text);
  metrics::TransientWindow w;
  if (v > 0 && v < 1) {
    w.fraction = v;
  } else if (v >= 1) {
    w.number = static_cast<size_t>(std::ceil(v));
    w.seconds = v;
  }
  return w;
}

run::LoadProfile profile_of(const std::string& name) {
  static const std::map<std::string, run::LoadProfile> kNames = {
      {"synchronous", run::LoadProfile::kSynchronous},
      {"throughput", run::LoadProfile::kThroughput},
      {"concurrent", run::LoadProfile::kConcurrent},
      {"constant", run::LoadProfile::kConstant},
      {"poisson", run::LoadProfile::kPoisson},
      {"sweep", run::LoadProfile::kSweep}};
  auto it = kNames.find(name);
  if (it == kNames.end())
    usage("--profile",
          "unknown profile '" + name +
              "'; use synchronous, throughput, concurrent, constant, poisson or sweep");
  return it->second;
}

int whole(const std::string& flag, double v, int min) {
  if (v != std::floor(v) || v < min || v > 10'000'000)
    usage(flag, fmt::format("must be a whole number >= {}, got {}", min, run::python_float(v)));
  return static_cast<int>(v);
}

void check_profile(const LoadFlags& f, const std::function<bool(const char*)>& given,
                   run::Spec& c) {
  run::RunLimits& L = c.limits;
  L.profile = profile_of(f.profile);
  const std::string name = f.profile;
  if (given("--request-rate"))
    usage("--request-rate", "is vLLM's traffic; with --profile give GuideLLM's --rate");
  if (given("--burstiness"))
    usage("--burstiness", "applies to vLLM's --request-rate, not to --profile " + name);
  if (given("--ramp-up-strategy"))
    usage("--ramp-up-strategy", "is vLLM's traffic; with --profile give GuideLLM's --rate");
  if (c.self_timed)
    usage("--profile",
          "the " + c.dataset.name + " dataset replays its own timestamps; drop --profile");
  if (c.dataset.sharegpt.multi_turn) usage("--profile", "does not apply to --multi-turn runs");
  if (c.max_concurrencies.size() > 1)
    usage("--max-concurrency", "takes one value with --profile (GuideLLM's max concurrency)");
  if (given("--rate")) {
    for (const std::string& item : split_list("--rate", f.rate))
      L.rates.push_back(positive_finite("--rate", item));
  }
  const bool concurrency_given = given("--max-concurrency");
  switch (L.profile) {
    case run::LoadProfile::kSynchronous:
      if (!L.rates.empty())
        usage("--rate", "the synchronous profile takes no rate (one request at a time)");
      if (concurrency_given)
        usage("--max-concurrency", "the synchronous profile sends one request at a time");
      break;
    case run::LoadProfile::kThroughput:
      // GuideLLM's ThroughputProfile: --rate is its max concurrency.
      if (L.rates.size() > 1)
        usage("--rate", "the throughput profile takes one value (its max concurrency)");
      if (!L.rates.empty()) {
        if (concurrency_given)
          usage("--rate",
                "is the throughput profile's max concurrency; give it or --max-concurrency");
        c.max_concurrency = whole("--rate", L.rates.front(), 1);
        c.max_concurrencies = {c.max_concurrency};
      }
      break;
    case run::LoadProfile::kConcurrent:
      if (L.rates.empty())
        usage("--rate",
              "the concurrent profile needs --rate: the number of streams (e.g. 4 or 1,4,16)");
      if (concurrency_given)
        usage("--max-concurrency", "the concurrent profile takes its concurrency from --rate");
      for (double streams : L.rates) whole("--rate", streams, 1);
      break;
    case run::LoadProfile::kConstant:
    case run::LoadProfile::kPoisson:
      if (L.rates.empty())
        usage("--rate",
              "the " + name + " profile needs --rate: requests per second (e.g. 2 or 1,2,4)");
      break;
    case run::LoadProfile::kSweep:
      if (L.rates.size() > 1)
        usage("--rate", "the sweep profile takes one value: its number of benchmarks");
      if (!L.rates.empty()) L.sweep_size = whole("--rate", L.rates.front(), 2);
      break;
    case run::LoadProfile::kNone:
      break;
  }
}

size_t benchmark_count(const run::Spec& c) {
  const run::RunLimits& L = c.limits;
  switch (L.profile) {
    case run::LoadProfile::kNone:
      return c.request_rates.size() * c.max_concurrencies.size();
    case run::LoadProfile::kSweep:
      return static_cast<size_t>(L.sweep_size);
    case run::LoadProfile::kConcurrent:
    case run::LoadProfile::kConstant:
    case run::LoadProfile::kPoisson:
      return L.rates.size();
    default:
      return 1;
  }
}

void check_windows(const LoadFlags& f, const std::function<bool(const char*)>& given,
                   run::Spec& c) {
  metrics::TransientSpec& t = c.limits.transients;
  auto count = [&](const char* flag, const std::string& text) {
    return static_cast<size_t>(parse_int(flag, text, 0, 100'000'000));
  };
  auto seconds = [&](const char* flag, const std::string& text) {
    const double v = parse_double(flag, text);
    if (!(v >= 0) || std::isinf(v))
      usage(flag, "must be a non-negative number of seconds, got " + text);
    return v;
  };
  if (given("--warmup")) {
    for (const char* other : {"--warmup-number", "--warmup-duration"})
      if (given(other))
        usage(other, "give --warmup or --warmup-number/--warmup-duration, not both");
    t.warmup = guidellm_window("--warmup", f.warmup);
  }
  if (given("--cooldown")) {
    for (const char* other : {"--cooldown-number", "--cooldown-duration"})
      if (given(other))
        usage(other, "give --cooldown or --cooldown-number/--cooldown-duration, not both");
    t.cooldown = guidellm_window("--cooldown", f.cooldown);
  }
  if (given("--warmup-number")) t.warmup.number = count("--warmup-number", f.warmup_number);
  if (given("--warmup-duration"))
    t.warmup.seconds = seconds("--warmup-duration", f.warmup_duration);
  if (given("--cooldown-number")) t.cooldown.number = count("--cooldown-number", f.cooldown_number);
  if (given("--cooldown-duration"))
    t.cooldown.seconds = seconds("--cooldown-duration", f.cooldown_duration);
}

}  // namespace

void apply_load_flags(const LoadFlags& f, const Given& given, run::Spec& c) {
  run::RunLimits& L = c.limits;
  if (given("--duration")) L.duration_s = positive_finite("--duration", f.duration);
  if (given("--profile")) {
    check_profile(f, given, c);
  } else if (given("--rate")) {
    usage("--rate", "is GuideLLM's rate and needs --profile; vLLM's is --request-rate");
  }
  if (L.duration_s > 0 && c.dataset.sharegpt.multi_turn)
    usage("--duration", "does not apply to --multi-turn runs (a conversation cannot be cut off)");
  if (L.duration_s > 0 && given("--ramp-up-strategy"))
    usage("--ramp-up-strategy",
          "ramps over --num-prompts requests; it cannot be cut off by --duration");
  if (L.duration_s > 0 && L.profile == run::LoadProfile::kNone) {
    // vLLM's arrivals put the first request one mean gap after t0.
    for (double rate : c.request_rates) {
      if (!std::isinf(rate) && 1.0 / rate >= L.duration_s)
        usage("--duration", fmt::format("no request is due within {} s at --request-rate {}",
                                        run::python_float(L.duration_s), run::python_float(rate)));
    }
  }
  L.max_requests_given = given("--num-prompts");
  // A finite rate over a duration sizes the dataset (rate × duration) unless --num-prompts caps it.
  if (L.duration_s > 0 && !L.max_requests_given && !c.self_timed) {
    size_t needed = 0;
    const bool by_rate =
        L.profile == run::LoadProfile::kConstant || L.profile == run::LoadProfile::kPoisson;
    const std::vector<double>& rates =
        L.profile == run::LoadProfile::kNone ? c.request_rates : L.rates;
    if (by_rate || L.profile == run::LoadProfile::kNone) {
      for (double rate : rates)
        if (!std::isinf(rate))
          needed = std::max(needed, schedule::requests_within(rate, L.duration_s));
    }
    if (needed > 0 && c.dataset.name != "generated-shared-prefix")
      c.num_prompts = static_cast<int>(std::min<size_t>(needed, 100'000'000));
  }
  L.max_requests = static_cast<size_t>(c.num_prompts);
  const size_t runs = benchmark_count(c);
  if (L.profile != run::LoadProfile::kNone && runs > 1) {
    for (const char* flag : {"--result-filename", "--records"}) {
      if (given(flag))
        usage(flag, "names one file, but --profile " + f.profile + " makes " +
                        std::to_string(runs) + " runs; use --result-dir");
    }
  }
  check_windows(f, given, c);
  if (given("--max-errors")) L.max_errors = parse_int("--max-errors", f.max_errors, 1, INT64_MAX);
  if (given("--max-error-rate")) {
    L.max_error_rate = parse_double("--max-error-rate", f.max_error_rate);
    if (!(L.max_error_rate > 0 && L.max_error_rate < 1))
      usage("--max-error-rate", "must be in (0, 1), got " + f.max_error_rate);
  }
}

}  // namespace servebench::cli
