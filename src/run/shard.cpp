// Sharding a run (shard.h): parsing --shard and --start-at, splitting the plan and the caps,
// hashing the whole plan, waiting for the common start, and the result's "shard" block.
#include "run/shard.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/interrupt.h"

namespace servebench::run {
namespace {

[[noreturn]] void usage(const std::string& where, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, where, message);
}

// A decimal integer in [0, max], the whole text; nullopt otherwise.
std::optional<int64_t> whole_number(const std::string& text, int64_t max) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t value = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    value = value * 10 + (ch - '0');
  }
  if (value > max) return std::nullopt;
  return value;
}

constexpr int64_t kMaxShards = 1'000'000;

int count_from(const std::string& where, const std::string& text) {
  const std::optional<int64_t> n = whole_number(text, kMaxShards);
  if (!n || *n < 1) usage(where, "the shard count must be an integer >= 1, got '" + text + "'");
  return static_cast<int>(*n);
}

int env_number(const Environment& env, const std::string& name) {
  const std::string text = env(name).value_or("");
  const std::optional<int64_t> n = whole_number(text, std::numeric_limits<int32_t>::max());
  if (!n) usage(name, "must be an integer >= 0, got '" + text + "'");
  return static_cast<int>(*n);
}

// K and N from the engine's environment (docs/run.md "Shards"); `count` > 0 when given.
Shard shard_from_environment(const Environment& env, int count) {
  Shard s;
  if (env("JOB_COMPLETION_INDEX")) {  // Kubernetes Indexed Job: N is not exported
    s.index = env_number(env, "JOB_COMPLETION_INDEX");
    if (count == 0 && !env("SERVEBENCH_SHARDS"))
      usage("--shard",
            "JOB_COMPLETION_INDEX is set but not the shard count: give --shard auto/N "
            "or SERVEBENCH_SHARDS");
    s.count = count > 0 ? count : count_from("SERVEBENCH_SHARDS", *env("SERVEBENCH_SHARDS"));
  } else if (env("SLURM_ARRAY_TASK_ID")) {  // ids from --array=MIN-MAX[:STEP]
    const int id = env_number(env, "SLURM_ARRAY_TASK_ID");
    const int min = env("SLURM_ARRAY_TASK_MIN") ? env_number(env, "SLURM_ARRAY_TASK_MIN") : 0;
    const int step = env("SLURM_ARRAY_TASK_STEP") ? env_number(env, "SLURM_ARRAY_TASK_STEP") : 1;
    if (id < min || step < 1 || (id - min) % step != 0)
      usage("SLURM_ARRAY_TASK_ID",
            fmt::format("{} is not in the range from SLURM_ARRAY_TASK_MIN {} by "
                        "SLURM_ARRAY_TASK_STEP {}; use --array=MIN-MAX[:STEP] or --shard K/N",
                        id, min, step));
    s.index = (id - min) / step;
    s.count = count > 0 ? count
                        : count_from("SLURM_ARRAY_TASK_COUNT",
                                     env("SLURM_ARRAY_TASK_COUNT").value_or(""));
  } else if (env("SLURM_PROCID")) {  // srun: one task per shard
    s.index = env_number(env, "SLURM_PROCID");
    s.count = count > 0 ? count : count_from("SLURM_NTASKS", env("SLURM_NTASKS").value_or(""));
  } else {
    usage("--shard",
          "auto: no shard in the environment (JOB_COMPLETION_INDEX, "
          "SLURM_ARRAY_TASK_ID or SLURM_PROCID); give --shard K/N");
  }
  return s;
}

uint64_t fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char ch : bytes) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

int64_t wall_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t mono_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

// Nanoseconds in "[.fraction]" (at most 9 digits kept); `text` starts after the digits before it.
std::optional<int64_t> fraction_ns(const std::string& digits) {
  if (digits.empty() || digits.size() > 9 || !whole_number(digits, 999'999'999))
    return std::nullopt;
  int64_t ns = *whole_number(digits, 999'999'999);
  for (size_t i = digits.size(); i < 9; ++i) ns *= 10;
  return ns;
}

std::optional<int64_t> iso_8601_ns(const std::string& v) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
  char sep = 0;
  if (std::sscanf(v.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &s, &used) <
          7 ||
      (sep != 'T' && sep != 't' && sep != ' ') || used != 19)
    return std::nullopt;
  const std::chrono::year_month_day date{std::chrono::year(y), std::chrono::month(mo),
                                         std::chrono::day(d)};
  if (!date.ok() || h > 23 || mi > 59 || s > 60) return std::nullopt;
  size_t at = 19;
  int64_t frac = 0;
  if (at < v.size() && v[at] == '.') {
    size_t end = v.find_first_not_of("0123456789", at + 1);
    if (end == std::string::npos) end = v.size();
    const std::optional<int64_t> f = fraction_ns(v.substr(at + 1, end - at - 1));
    if (!f) return std::nullopt;
    frac = *f;
    at = end;
  }
  int64_t offset_s = 0;  // the zone's offset from UTC
  const std::string zone = v.substr(at);
  if (zone == "Z" || zone == "z" || zone.empty()) {
  } else if ((zone[0] == '+' || zone[0] == '-') && (zone.size() == 6 || zone.size() == 5)) {
    const std::string hh = zone.substr(1, 2);
    const std::string mm = zone.size() == 6 ? zone.substr(4, 2) : zone.substr(3, 2);
    if (zone.size() == 6 && zone[3] != ':') return std::nullopt;
    const auto zh = whole_number(hh, 23), zm = whole_number(mm, 59);
    if (!zh || !zm) return std::nullopt;
    offset_s = (zone[0] == '+' ? 1 : -1) * (*zh * 3600 + *zm * 60);
  } else {
    return std::nullopt;
  }
  const int64_t days = std::chrono::sys_days(date).time_since_epoch().count();
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + s - offset_s;
  return secs * 1'000'000'000 + frac;
}

}  // namespace

Shard parse_shard(const std::string& value, const Environment& env) {
  const size_t slash = value.find('/');
  const std::string k = value.substr(0, slash);
  const std::string n = slash == std::string::npos ? "" : value.substr(slash + 1);
  if (k == "auto") {
    const Shard s = shard_from_environment(env, n.empty() ? 0 : count_from("--shard", n));
    if (s.index >= s.count)
      usage("--shard", fmt::format("auto: shard {} from the environment is not below the count {}",
                                   s.index, s.count));
    return s;
  }
  if (slash == std::string::npos)
    usage("--shard", "expected K/N (shard K of N, 0 <= K < N) or auto, got '" + value + "'");
  Shard s;
  s.count = count_from("--shard", n);
  const std::optional<int64_t> index = whole_number(k, kMaxShards);
  if (!index || *index >= s.count)
    usage("--shard",
          fmt::format("K in K/N must be an integer from 0 to {}, got '{}'", s.count - 1, value));
  s.index = static_cast<int>(*index);
  return s;
}

int64_t parse_start_at_ns(const std::string& value) {
  const size_t dot = value.find('.');
  const std::optional<int64_t> secs = whole_number(value.substr(0, dot), 9'000'000'000);
  if (secs) {  // unix seconds, decimals allowed
    if (dot == std::string::npos) return *secs * 1'000'000'000;
    if (const std::optional<int64_t> frac = fraction_ns(value.substr(dot + 1)))
      return *secs * 1'000'000'000 + *frac;
  } else if (const std::optional<int64_t> ns = iso_8601_ns(value)) {
    return *ns;
  }
  usage("--start-at",
        "expected unix seconds (1764147600.5) or ISO 8601 "
        "(2026-11-26T09:00:00Z), got '" +
            value + "'");
}

void check_shardable(const Spec& c) {
  if (c.shard.count == 0) return;
  const int n = c.shard.count;
  if (c.search)
    usage("--shard",
          "cannot split --search-slo: each probe's rate comes from the results measured "
          "before it; run the search unsharded");
  if (c.target_urls.size() > 1 || c.sim_instances > 1)
    usage("--shard",
          "cannot split several targets in one run (each has its own common t0); shard "
          "each target's run apart");
  if (c.limits.profile == LoadProfile::kSweep)
    usage("--shard",
          "cannot split --profile sweep: its rates come from the throughput the "
          "shards measure apart; give them with --profile constant --rate R1,R2,...");
  if (c.limits.profile == LoadProfile::kSynchronous)
    usage("--shard",
          "cannot split --profile synchronous (one request at a time); use --profile "
          "concurrent --rate " +
              std::to_string(n));
  for (int cap : c.max_concurrencies) {
    if (cap > 0 && cap < n)
      usage("--max-concurrency", fmt::format("{} cannot be split over {} shards (each needs at "
                                             "least 1); give at least {}",
                                             cap, n, n));
  }
  if (c.limits.profile == LoadProfile::kConcurrent) {
    for (double streams : c.limits.rates) {
      if (streams < n)
        usage("--rate", fmt::format("{} concurrent streams cannot be split over {} shards (each "
                                    "needs at least 1)",
                                    streams, n));
    }
  }
  if (c.max_active_conversations > 0 && c.max_active_conversations < n)
    usage("--max-active-conversations",
          fmt::format("{} cannot be split over {} shards (each needs at least 1)",
                      c.max_active_conversations, n));
}

std::vector<client::PlannedRequest> shard_plan(const std::vector<client::PlannedRequest>& plan,
                                               int index, int count) {
  std::vector<client::PlannedRequest> mine;
  mine.reserve(plan.size() / static_cast<size_t>(count) + 1);
  for (const client::PlannedRequest& r : plan) {
    // A conversation's turns follow each other on one client loop: they stay together.
    const uint64_t key = r.conversation >= 0 ? static_cast<uint64_t>(r.conversation) : r.index;
    if (key % static_cast<uint64_t>(count) == static_cast<uint64_t>(index)) mine.push_back(r);
  }
  return mine;
}

int shard_share(int total, int index, int count) {
  if (count <= 0 || total <= 0) return total;
  return (total - index + count - 1) / count;
}

std::string plan_hash(const Spec& c, const std::vector<client::PlannedRequest>& plan) {
  uint64_t h = 14695981039346656037ULL;
  h = fnv1a(h, fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}\n", c.backend,
                           c.endpoint, c.model, c.served_model_name, c.dataset.name, c.seed,
                           c.num_prompts_requested, c.request_rate, c.burstiness, c.max_concurrency,
                           c.max_active_conversations, static_cast<int>(c.limits.strategy),
                           c.limits.duration_s, c.trace_time_scale, c.ignore_eos, c.extra_body_json,
                           c.stage_index, c.limits.benchmark));
  for (const client::PlannedRequest& r : plan) {
    h = fnv1a(h, fmt::format("{} {} {} {} {} {} {}\n", r.index, r.intended_ns, r.prompt_tokens,
                             r.max_tokens, r.conversation, r.turn, r.follows));
    h = fnv1a(h, r.prompt);
  }
  return fmt::format("{:016x}", h);
}

ShardStart start_shard(const Shard& shard, const std::atomic<bool>& stop) {
  const int64_t arrived_ns = wall_now_ns();
  if (shard.start_at_ns && arrived_ns < *shard.start_at_ns) {
    std::fprintf(stderr, "servebench: shard %d/%d waits %.3f s for --start-at\n", shard.index,
                 shard.count, static_cast<double>(*shard.start_at_ns - arrived_ns) / 1e9);
    // Up to 100 ms at a time, the last stretch to the instant; a stop rule, SIGINT or SIGTERM
    // ends the wait (the caller then gives up before sending).
    for (int64_t now = arrived_ns; now < *shard.start_at_ns && !stop.load() && !core::interrupted();
         now = wall_now_ns()) {
      const int64_t until = std::min(*shard.start_at_ns, now + 100'000'000);
      const timespec at{static_cast<time_t>(until / 1'000'000'000),
                        static_cast<long>(until % 1'000'000'000)};
      clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, nullptr);
    }
  }
  ShardStart s;
  const int64_t wall_before = wall_now_ns();
  s.t0_mono_ns = mono_now_ns();
  const int64_t wall_after = wall_now_ns();
  s.t0_wall_ns = wall_before + (wall_after - wall_before) / 2;
  s.clock_offset_ns = s.t0_wall_ns - s.t0_mono_ns;
  if (shard.start_at_ns && arrived_ns > *shard.start_at_ns) {
    s.started_late_ns = s.t0_wall_ns - *shard.start_at_ns;
    std::fprintf(stderr,
                 "servebench: shard %d/%d started %.3f s late (--start-at passed before "
                 "it was ready)\n",
                 shard.index, shard.count, static_cast<double>(s.started_late_ns) / 1e9);
  }
  return s;
}

nlohmann::json shard_json(const Spec& c, const ShardStart& start, const std::string& hash,
                          size_t requests_planned, const std::string& records_file) {
  nlohmann::json j = {
      {"index", c.shard.index},
      {"count", c.shard.count},
      {"plan_hash", hash},
      {"host", host_name()},
      {"t0_wall_ns", start.t0_wall_ns},
      {"clock_offset_ns", start.clock_offset_ns},
      {"start_at_ns",
       c.shard.start_at_ns ? nlohmann::json(*c.shard.start_at_ns) : nlohmann::json()},
      {"started_late_ns", start.started_late_ns},
      {"requests_planned", requests_planned},
  };
  if (!records_file.empty()) j["records_file"] = records_file;
  j["metric_options"] = {{"percentiles", c.percentiles},
                         {"percentile_metrics", c.percentile_metrics},
                         {"goodput_slo_ms", c.goodput_slo_ms}};
  return j;
}

}  // namespace servebench::run
