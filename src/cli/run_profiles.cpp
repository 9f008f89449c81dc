// GuideLLM's load shapes for `servebench run`: profiles (guidellm/benchmark/profile.py), the
// --duration bound and stop rules (guidellm/scheduler/constraints.py), warmup/cooldown
// (guidellm/benchmark/aggregator.py). run_execute.cpp calls in at a few points; docs/run.md.
#include "cli/run_profiles.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "cli/run_support.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "schedule/schedule.h"

namespace servebench::cli::run {
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

LoadProfile profile_of(const std::string& name) {
  static const std::map<std::string, LoadProfile> kNames = {
      {"synchronous", LoadProfile::kSynchronous}, {"throughput", LoadProfile::kThroughput},
      {"concurrent", LoadProfile::kConcurrent},   {"constant", LoadProfile::kConstant},
      {"poisson", LoadProfile::kPoisson},         {"sweep", LoadProfile::kSweep}};
  auto it = kNames.find(name);
  if (it == kNames.end())
    usage("--profile",
          "unknown profile '" + name +
              "'; use synchronous, throughput, concurrent, constant, poisson or sweep");
  return it->second;
}

int whole(const std::string& flag, double v, int min) {
  if (v != std::floor(v) || v < min || v > 10'000'000)
    usage(flag, fmt::format("must be a whole number >= {}, got {}", min, python_float(v)));
  return static_cast<int>(v);
}

void check_profile(const LoadFlags& f, const std::function<bool(const char*)>& given,
                   RunConfig& c) {
  RunLimits& L = c.limits;
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
    case LoadProfile::kSynchronous:
      if (!L.rates.empty())
        usage("--rate", "the synchronous profile takes no rate (one request at a time)");
      if (concurrency_given)
        usage("--max-concurrency", "the synchronous profile sends one request at a time");
      break;
    case LoadProfile::kThroughput:
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
    case LoadProfile::kConcurrent:
      if (L.rates.empty())
        usage("--rate",
              "the concurrent profile needs --rate: the number of streams (e.g. 4 or 1,4,16)");
      if (concurrency_given)
        usage("--max-concurrency", "the concurrent profile takes its concurrency from --rate");
      for (double streams : L.rates) whole("--rate", streams, 1);
      break;
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      if (L.rates.empty())
        usage("--rate",
              "the " + name + " profile needs --rate: requests per second (e.g. 2 or 1,2,4)");
      break;
    case LoadProfile::kSweep:
      if (L.rates.size() > 1)
        usage("--rate", "the sweep profile takes one value: its number of benchmarks");
      if (!L.rates.empty()) L.sweep_size = whole("--rate", L.rates.front(), 2);
      break;
    case LoadProfile::kNone:
      break;
  }
}

size_t benchmark_count(const RunConfig& c) {
  const RunLimits& L = c.limits;
  switch (L.profile) {
    case LoadProfile::kNone:
      return c.request_rates.size() * c.max_concurrencies.size();
    case LoadProfile::kSweep:
      return static_cast<size_t>(L.sweep_size);
    case LoadProfile::kConcurrent:
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      return L.rates.size();
    default:
      return 1;
  }
}

void check_windows(const LoadFlags& f, const std::function<bool(const char*)>& given,
                   RunConfig& c) {
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

// A sweep's constant rates: GuideLLM's SweepProfile.next_strategy,
// np.linspace(synchronous_rate, throughput_rate, sweep_size - 1)[1:].
std::vector<double> sweep_rates(double synchronous, double throughput, int sweep_size) {
  std::vector<double> rates;
  const int points = sweep_size - 1;
  for (int k = 1; k < points; ++k)
    rates.push_back(synchronous + (throughput - synchronous) * k / (points - 1));
  return rates;
}

// GuideLLM's throughput benchmark runs at most its max_concurrency setting at once (512 by
// default, guidellm/settings.py; seed 003's throughput row shows 512 incomplete requests).
int throughput_concurrency(const RunConfig& c) {
  constexpr int kGuidellmMaxConcurrency = 512;
  return c.max_concurrency > 0 ? c.max_concurrency : kGuidellmMaxConcurrency;
}

void set_benchmark(RunConfig& point, LoadProfile strategy, double rate, int concurrency) {
  point.request_rate = rate;
  point.max_concurrency = concurrency;
  point.request_rates = {rate};
  point.max_concurrencies = {concurrency};
  point.limits.strategy = strategy;
  switch (strategy) {
    case LoadProfile::kSynchronous:
      point.limits.benchmark = "synchronous";
      break;
    case LoadProfile::kThroughput:
      point.limits.benchmark = "throughput";
      break;
    case LoadProfile::kConcurrent:
      point.limits.benchmark = fmt::format("concurrent@{}", concurrency);
      break;
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      // GuideLLM's strategy_display_str: "constant@1.25". The spacing is in the plan; the
      // burstiness names it for vLLM-style readers (inf = constant, 1 = Poisson).
      point.burstiness =
          strategy == LoadProfile::kConstant ? std::numeric_limits<double>::infinity() : 1.0;
      point.limits.benchmark = fmt::format("{}@{:.2f}", profile_name(strategy), rate);
      break;
    default:
      break;
  }
}

bool is_error(const record::RequestRecord& r) {
  if (r.success) return false;
  const std::string reason = metrics::classify_failure(r);
  return reason != "cancelled" && reason != "not_sent";
}

}  // namespace

const char* profile_name(LoadProfile p) {
  switch (p) {
    case LoadProfile::kSynchronous:
      return "synchronous";
    case LoadProfile::kThroughput:
      return "throughput";
    case LoadProfile::kConcurrent:
      return "concurrent";
    case LoadProfile::kConstant:
      return "constant";
    case LoadProfile::kPoisson:
      return "poisson";
    case LoadProfile::kSweep:
      return "sweep";
    case LoadProfile::kNone:
      break;
  }
  return "";
}

void apply_load_flags(const LoadFlags& f, const std::function<bool(const char*)>& given,
                      RunConfig& c) {
  RunLimits& L = c.limits;
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
  if (L.duration_s > 0 && L.profile == LoadProfile::kNone) {
    // vLLM's arrivals put the first request one mean gap after t0.
    for (double rate : c.request_rates) {
      if (!std::isinf(rate) && 1.0 / rate >= L.duration_s)
        usage("--duration", fmt::format("no request is due within {} s at --request-rate {}",
                                        python_float(L.duration_s), python_float(rate)));
    }
  }
  L.max_requests_given = given("--num-prompts");
  // A finite rate over a duration sizes the dataset (rate × duration) unless --num-prompts caps it.
  if (L.duration_s > 0 && !L.max_requests_given && !c.self_timed) {
    size_t needed = 0;
    const bool by_rate = L.profile == LoadProfile::kConstant || L.profile == LoadProfile::kPoisson;
    const std::vector<double>& rates = L.profile == LoadProfile::kNone ? c.request_rates : L.rates;
    if (by_rate || L.profile == LoadProfile::kNone) {
      for (double rate : rates)
        if (!std::isinf(rate))
          needed = std::max(needed, schedule::requests_within(rate, L.duration_s));
    }
    if (needed > 0 && c.dataset.name != "generated-shared-prefix")
      c.num_prompts = static_cast<int>(std::min<size_t>(needed, 100'000'000));
  }
  L.max_requests = static_cast<size_t>(c.num_prompts);
  const size_t runs = benchmark_count(c);
  if (L.profile != LoadProfile::kNone && runs > 1) {
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

std::optional<RunConfig> BenchmarkSequence::next(std::span<const report::RunResult> done) {
  const RunLimits& L = base_.limits;
  RunConfig point = base_;
  const size_t i = index_;
  const double inf = std::numeric_limits<double>::infinity();
  switch (L.profile) {
    case LoadProfile::kNone: {
      const size_t per_rate = base_.max_concurrencies.size();
      if (i >= base_.request_rates.size() * per_rate) return std::nullopt;
      point.request_rate = base_.request_rates[i / per_rate];
      point.max_concurrency = base_.max_concurrencies[i % per_rate];
      break;
    }
    case LoadProfile::kSynchronous:
      if (i >= 1) return std::nullopt;
      set_benchmark(point, LoadProfile::kSynchronous, inf, 1);
      break;
    case LoadProfile::kThroughput:
      if (i >= 1) return std::nullopt;
      set_benchmark(point, LoadProfile::kThroughput, inf, throughput_concurrency(base_));
      break;
    case LoadProfile::kConcurrent:
      if (i >= L.rates.size()) return std::nullopt;
      set_benchmark(point, LoadProfile::kConcurrent, inf, static_cast<int>(L.rates[i]));
      break;
    case LoadProfile::kConstant:
    case LoadProfile::kPoisson:
      if (i >= L.rates.size()) return std::nullopt;
      set_benchmark(point, L.profile, L.rates[i], base_.max_concurrency);
      break;
    case LoadProfile::kSweep: {
      if (i >= static_cast<size_t>(L.sweep_size)) return std::nullopt;
      if (i == 0) {
        set_benchmark(point, LoadProfile::kSynchronous, inf, 1);
        break;
      }
      if (i == 1) {
        set_benchmark(point, LoadProfile::kThroughput, inf, throughput_concurrency(base_));
        break;
      }
      if (sweep_rates_.empty()) {
        // GuideLLM reads requests_per_second.successful.mean; here completed / duration.
        const double sync =
            done.size() >= 2 ? report::figure(done[0], "request_throughput").value_or(0) : 0;
        const double thr =
            done.size() >= 2 ? report::figure(done[1], "request_throughput").value_or(0) : 0;
        if (!(thr > 0) || !(sync > 0) || std::isinf(thr)) {
          std::fprintf(
              stderr,
              "servebench: sweep: the synchronous (%.2f req/s) and throughput (%.2f req/s) "
              "benchmarks must both complete requests to choose the constant rates; the "
              "sweep ends here\n",
              sync, thr);
          return std::nullopt;
        }
        sweep_rates_ = sweep_rates(sync, thr, L.sweep_size);
      }
      set_benchmark(point, LoadProfile::kConstant, sweep_rates_.at(i - 2), base_.max_concurrency);
      break;
    }
  }
  point.limits.sequence = index_++;
  return point;
}

std::vector<client::PlannedRequest> bounded_plan(const RunConfig& c,
                                                 const std::vector<dataset::Prompt>& prompts) {
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
      times = schedule::arrival_times_ns(n, {rate, c.burstiness, c.seed});
      if (L.duration_s > 0) {
        const int64_t end_ns = std::llround(L.duration_s * 1e9);
        std::erase_if(times, [&](int64_t t) { return t >= end_ns; });
      }
    }
  }
  if (times.empty())
    usage("--duration", fmt::format("no request is due within {} s at --request-rate {}",
                                    python_float(L.duration_s), python_float(rate)));
  return plan_at(times, prompts);  // prompts reused in turn
}

void StopRules::observe(const record::RequestRecord& r) {
  if (r.warmup || r.sent_ns < 0) return;  // never started: not processed (GuideLLM)
  ++outcome_.processed;
  const bool error = is_error(r);
  if (error) ++outcome_.errors;
  // GuideLLM appends completed, errored and cancelled requests to the window.
  const size_t size = std::max<size_t>(1, limits_.error_rate_window);
  if (window_.size() < size) {
    window_.push_back(error);
  } else {
    if (window_[window_next_]) --window_errors_;
    window_[window_next_] = error;
    window_next_ = (window_next_ + 1) % size;
  }
  if (error) ++window_errors_;
  if (tripped()) return;
  if (limits_.max_errors > 0 && static_cast<int64_t>(outcome_.errors) >= limits_.max_errors) {
    outcome_.rule = "max_errors";
    outcome_.message =
        fmt::format("--max-errors {}: {} requests errored", limits_.max_errors, outcome_.errors);
  } else if (limits_.max_error_rate > 0 && outcome_.processed >= size &&
             static_cast<double>(window_errors_) / static_cast<double>(window_.size()) >=
                 limits_.max_error_rate) {
    outcome_.rule = "max_error_rate";
    outcome_.message =
        fmt::format("--max-error-rate {}: {} of the last {} requests errored",
                    python_float(limits_.max_error_rate), window_errors_, window_.size());
  }
  if (tripped() && stop_ != nullptr) stop_->store(true);
}

TrimmedRun trim_transients(const RunConfig& c, const std::vector<record::RequestRecord>& records) {
  TrimmedRun t;
  metrics::TransientSpec spec = c.limits.transients;
  if (!spec.any()) return t;
  spec.run_duration_s = c.limits.duration_s;
  t.split = metrics::split_transients(records, spec);
  if (t.split.warmup + t.split.cooldown == 0) return t;
  t.trimmed = true;
  int64_t first_sent = -1, last_done = -1;
  for (size_t i = 0; i < records.size(); ++i) {
    if (t.split.phase[i] != metrics::Phase::kMeasured) continue;
    const record::RequestRecord& r = records[i];
    t.measured.push_back(r);
    if (r.sent_ns >= 0 && (first_sent < 0 || r.sent_ns < first_sent)) first_sent = r.sent_ns;
    last_done = std::max(last_done, r.done_ns);
  }
  if (first_sent >= 0 && last_done > first_sent)
    t.duration_s = static_cast<double>(last_done - first_sent) / 1e9;
  return t;
}

void mark_excluded_records(const std::string& path,
                           const std::vector<record::RequestRecord>& records,
                           const metrics::TransientSplit& split) {
  if (path.empty() || split.warmup + split.cooldown == 0) return;
  std::map<uint64_t, const char*> excluded;
  for (size_t i = 0; i < records.size() && i < split.phase.size(); ++i) {
    if (split.phase[i] != metrics::Phase::kMeasured)
      excluded[records[i].index] = metrics::phase_name(split.phase[i]);
  }
  std::ifstream in(path);
  if (!in) throw core::Error(core::ErrorKind::kInput, "--records", "cannot read '" + path + "'");
  const std::string temp = path + ".tmp";
  std::ofstream out(temp, std::ios::trunc);
  if (!out) throw core::Error(core::ErrorKind::kInput, "--records", "cannot write '" + temp + "'");
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object() && !j.value("warmup", false) && j.contains("index")) {
      auto it = excluded.find(j["index"].get<uint64_t>());
      if (it != excluded.end()) {
        j["excluded"] = it->second;
        line = j.dump();
      }
    }
    out << line << '\n';
  }
  out.close();
  if (!out) throw core::Error(core::ErrorKind::kInput, "--records", "cannot write '" + temp + "'");
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec)
    throw core::Error(core::ErrorKind::kInput, "--records",
                      "cannot replace '" + path + "': " + ec.message());
}

namespace {

nlohmann::json window_json(const metrics::TransientWindow& w, size_t excluded) {
  auto or_null = [](auto v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"requests", excluded},
          {"number", or_null(w.number)},
          {"seconds", or_null(w.seconds)},
          {"fraction", or_null(w.fraction)}};
}

std::string window_text(const metrics::TransientWindow& w, bool warmup) {
  std::vector<std::string> parts;
  if (w.number > 0)
    parts.push_back(fmt::format("the {} {} to complete", warmup ? "first" : "last", w.number));
  if (w.seconds > 0)
    parts.push_back(warmup ? fmt::format("due in the first {} s", python_float(w.seconds))
                           : fmt::format("ending in the last {} s", python_float(w.seconds)));
  if (w.fraction > 0)
    parts.push_back(fmt::format("in the {} {}% of the run", warmup ? "first" : "last",
                                python_float(w.fraction * 100)));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : " or ") + p;
  return out;
}

}  // namespace

nlohmann::json load_json(const RunConfig& c, const TrimmedRun& trimmed, const StopOutcome& stop,
                         bool duration_ended) {
  const RunLimits& L = c.limits;
  auto or_null = [](const std::string& s) {
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
  };
  nlohmann::json j = {
      {"profile", or_null(profile_name(L.profile))},
      {"benchmark", or_null(L.benchmark)},
      {"sequence",
       L.profile != LoadProfile::kNone ? nlohmann::json(L.sequence) : nlohmann::json(nullptr)},
      {"strategy", or_null(profile_name(L.strategy))},
      {"duration_s", L.duration_s > 0 ? nlohmann::json(L.duration_s) : nlohmann::json(nullptr)},
      {"duration_ended", duration_ended},
      {"max_requests", L.max_requests},
      {"stopped_by", or_null(stop.rule)},
      {"stop_message", or_null(stop.message)},
      {"errors", stop.errors},
      {"processed", stop.processed}};
  if (L.transients.any()) {
    j["excluded"] = {{"warmup", window_json(L.transients.warmup, trimmed.split.warmup)},
                     {"cooldown", window_json(L.transients.cooldown, trimmed.split.cooldown)},
                     {"measured_duration_s", trimmed.trimmed ? nlohmann::json(trimmed.duration_s)
                                                             : nlohmann::json(nullptr)}};
  }
  return j;
}

std::string load_console_lines(const RunConfig& c, const TrimmedRun& trimmed,
                               const StopOutcome& stop) {
  std::string out;
  const metrics::TransientSpec& t = c.limits.transients;
  if (t.any()) {
    out += fmt::format("Excluded from the metrics: {} warmup requests", trimmed.split.warmup);
    if (t.warmup.any()) out += " (" + window_text(t.warmup, true) + ")";
    out += fmt::format(", {} cooldown requests", trimmed.split.cooldown);
    if (t.cooldown.any()) out += " (" + window_text(t.cooldown, false) + ")";
    out += "\n";
  }
  if (!stop.rule.empty())
    out +=
        "Stopped by " + stop.message + "; sent no more requests and waited for those in flight\n";
  return out;
}

std::string load_header_lines(const RunConfig& c) {
  const RunLimits& L = c.limits;
  std::string out;
  if (!L.benchmark.empty())
    out +=
        fmt::format("Benchmark: {} (GuideLLM profile {})\n", L.benchmark, profile_name(L.profile));
  if (L.duration_s > 0)
    out += fmt::format("Duration: {} s (requests in flight at the end are cancelled)\n",
                       python_float(L.duration_s));
  return out;
}

bool ended_by_duration(const RunConfig& c, const std::vector<record::RequestRecord>& records,
                       size_t not_sent) {
  if (c.limits.duration_s <= 0) return false;
  if (not_sent > 0) return true;
  return std::any_of(records.begin(), records.end(), [](const record::RequestRecord& r) {
    return r.error.starts_with("cancelled: still running when the run's duration ended");
  });
}

}  // namespace servebench::cli::run
