// A point's result JSON (result_json.h): vLLM's keys come from report::vllm_result_json given
// the RunInfo below; servebench's section is assembled in point_result_json.
#include "run/result_json.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "core/clock.h"
#include "metrics/repeats.h"

#include "run/coordination.h"
#include "run/names.h"
#include "run/stages.h"

namespace servebench::run {
namespace {

// What only the run knows about the point; the report adds the client's health.
nlohmann::json run_state_json(bool interrupted, size_t not_sent) {
  return {{"interrupted", interrupted}, {"not_sent", not_sent}};
}

// Which dataset the run used, for the result JSON's "servebench" section (vLLM's own keys do
// not name it). Every file dataset reads the same --dataset-path.
nlohmann::json dataset_json(const Spec& c) {
  const std::string& path = c.dataset.trace.path;
  nlohmann::json j = {{"name", c.dataset.name},
                      {"path", path.empty() ? nlohmann::json(nullptr) : nlohmann::json(path)}};
  if (c.self_timed) j["trace_time_scale"] = c.trace_time_scale;
  if (c.dataset.name == "random") j["token_rule"] = token_rule_name(c.dataset.random.token_rule);
  if (c.dataset.sharegpt.multi_turn) {
    j["multi_turn"] = {{"conversations", c.num_conversations},
                       {"max_turns", c.dataset.sharegpt.max_turns},
                       {"max_active_conversations", c.max_active_conversations > 0
                                                        ? nlohmann::json(c.max_active_conversations)
                                                        : nlohmann::json(nullptr)}};
  }
  return j;
}

nlohmann::json window_json(const metrics::TransientWindow& w, size_t excluded) {
  auto or_null = [](auto v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"requests", excluded},
          {"number", or_null(w.number)},
          {"seconds", or_null(w.seconds)},
          {"fraction", or_null(w.fraction)}};
}

// The embedded deployment the run measured (--sim-deployment), so a table can say which
// configuration made the result: its name, file and the file's content.
nlohmann::json deployment_json(const Spec::Deployment& d) {
  return {{"name", d.name}, {"file", d.file}, {"content", d.content}};
}

// When t0 was by the wall clock (seconds since the Unix epoch), so a timeline of the run can be
// laid beside other clocks' (DCGM, node_exporter, the server's logs).
double t0_unix_s(int64_t t0_mono_ns) {
  return static_cast<double>(core::wall_ns_at_mono(t0_mono_ns)) / 1e9;
}

// The records file as the result names it: its bare name when it sits beside the result (a
// result and its records moved together keep finding each other), else the path as written.
std::string records_file_name(const Paths& paths) {
  namespace fs = std::filesystem;
  if (paths.result.empty()) return paths.records;
  std::error_code ec;
  const fs::path records = fs::weakly_canonical(fs::absolute(paths.records, ec), ec);
  const fs::path result = fs::weakly_canonical(fs::absolute(paths.result, ec), ec);
  if (ec || records.parent_path() != result.parent_path()) return paths.records;
  return records.filename().string();
}

}  // namespace

nlohmann::json args_json(const Spec& c, const Target& t) {
  auto number_or_inf = [](double v) {
    return std::isinf(v) ? nlohmann::json("inf") : nlohmann::json(v);
  };
  // vLLM's args hold the ramp-up flags always (None when not given).
  nlohmann::json ramp_strategy, ramp_start, ramp_end;
  if (c.ramp_up) {
    ramp_strategy = schedule::ramp_up_strategy_name(c.ramp_up->strategy);
    ramp_start = c.ramp_up->start_rps;
    ramp_end = c.ramp_up->end_rps;
  }
  return {{"backend", c.backend},
          {"base_url",
           c.embedded ? nlohmann::json(nullptr) : nlohmann::json(url_for_messages(c.base_url))},
          {"endpoint", c.endpoint},
          {"model", t.model_id},
          {"served_model_name", t.endpoint.model},
          {"dataset_name", c.dataset.name},
          {"dataset_path", dataset_json(c)["path"]},
          {"num_prompts", c.num_prompts_requested},
          {"random_input_len", c.dataset.random.input_len},
          {"random_output_len", c.dataset.random.output_len},
          {"random_range_ratio", c.dataset.random.range_ratio},
          {"random_prefix_len", c.dataset.random.prefix_len},
          {"request_rate", number_or_inf(c.request_rate)},
          {"burstiness", number_or_inf(c.burstiness)},
          {"max_concurrency",
           c.max_concurrency > 0 ? nlohmann::json(c.max_concurrency) : nlohmann::json(nullptr)},
          {"ramp_up_strategy", ramp_strategy},
          {"ramp_up_start_rps", ramp_start},
          {"ramp_up_end_rps", ramp_end},
          {"seed", c.seed},
          {"num_warmups", c.num_warmups},
          {"ignore_eos", c.ignore_eos}};
}

report::RunInfo run_info(const Spec& c, const Target& target, const std::string& date,
                         const PointOutcome& m) {
  const client::ClientStats& stats = m.stats;
  report::RunInfo info;
  info.backend = c.backend;
  info.label = c.label;
  info.model_id = target.model_id;
  info.tokenizer_id = target.tokenizer_id;
  info.num_prompts = c.num_prompts_requested;
  info.spec_decode = m.spec_decode;
  info.probes = m.probes;
  info.request_rate = c.request_rate;
  info.burstiness = c.burstiness;
  info.max_concurrency = c.max_concurrency;
  if (c.ramp_up) {
    info.ramp_up_strategy = schedule::ramp_up_strategy_name(c.ramp_up->strategy);
    info.ramp_up_start_rps = c.ramp_up->start_rps;
    info.ramp_up_end_rps = c.ramp_up->end_rps;
    info.rps_change_events = m.rps_change_events;
  }
  info.date = date;
  for (const auto& [k, v] : c.metadata) info.metadata[k] = v;
  info.percentile_metrics = c.percentile_metrics;
  info.goodput_slo_ms = c.goodput_slo_ms;
  report::ClientHealth health;
  health.cpu_user_s = stats.cpu_user_s;
  health.cpu_system_s = stats.cpu_system_s;
  health.max_loop_lag_ns = stats.max_loop_lag_ns;
  health.bytes_received = stats.bytes_received;
  health.sse_events = stats.sse_events;
  health.connections_opened = stats.connections_opened;
  health.t0_mono_ns = stats.t0_mono_ns;
  health.transport = stats.transport;
  health.arrival_clock = stats.arrival_clock;
  health.kernel_stamped_reads = stats.kernel_stamped_reads;
  health.reads_stamped_at_read = stats.reads_stamped_at_read;
  health.read_delay_p50_ns = stats.read_delay_p50_ns;
  health.read_delay_p99_ns = stats.read_delay_p99_ns;
  health.read_delay_p999_ns = stats.read_delay_p999_ns;
  health.read_delay_max_ns = stats.read_delay_max_ns;
  info.client_health = health;
  info.not_sent = m.not_sent;
  return info;
}

nlohmann::json point_result_json(const Spec& c, const metrics::Summary& summary,
                                 const report::RunInfo& info,
                                 const std::vector<record::RequestRecord>& measured,
                                 const PointOutcome& m, const TrimmedRun& trimmed,
                                 const Paths& paths) {
  nlohmann::json result = report::vllm_result_json(summary, info, measured, c.save_detailed);
  nlohmann::json& ours = result["servebench"];
  if (!ours.contains("client")) ours["client"] = nlohmann::json::object();
  ours["client"].update(run_state_json(m.interrupted, m.not_sent));
  if (m.stats.t0_mono_ns > 0) ours["client"]["t0_unix_s"] = t0_unix_s(m.stats.t0_mono_ns);
  if (!paths.records.empty()) ours["records_file"] = records_file_name(paths);
  if (!paths.result.empty()) ours["result_file"] = paths.result;
  ours["dataset"] = dataset_json(c);
  if (!m.server_metrics.is_null()) ours["server_metrics"] = m.server_metrics;
  if (c.stage_index >= 0) ours["stage"] = stage_json(c);
  if (!m.ramp_up.is_null()) ours["ramp_up"] = m.ramp_up;
  if (c.coordination) ours["target"] = target_json(c);
  if (!m.shard.is_null()) ours["shard"] = m.shard;
  if (c.deployment) ours["deployment"] = deployment_json(*c.deployment);
  ours["load"] = load_json(c, trimmed, m.stop, ended_by_duration(c, m.records, m.not_sent));
  return result;
}

nlohmann::json repeated_result_json(const Spec& c, const std::vector<nlohmann::json>& runs,
                                    const std::vector<uint64_t>& seeds) {
  using nlohmann::json;
  if (runs.empty()) return json::object();
  // vLLM's per-request arrays (report/result_json.cpp): one entry per request of a run.
  static const char* const kPerRequest[] = {"latencies",   "queue_times",     "input_lens",
                                            "output_lens", "ttfts",           "itls",
                                            "start_times", "generated_texts", "errors"};
  auto per_request = [](const std::string& key) {
    return std::find(std::begin(kPerRequest), std::end(kPerRequest), key) != std::end(kPerRequest);
  };
  json result = runs.front();
  json repeats = json::object();
  for (const auto& [key, first] : runs.front().items()) {
    if (key == "servebench") continue;
    if (first.is_array() && per_request(key)) {
      json all = json::array();
      for (const json& r : runs) {
        const auto it = r.find(key);
        if (it == r.end() || !it->is_array()) continue;
        for (const json& v : *it) all.push_back(v);
      }
      result[key] = std::move(all);
      continue;
    }
    if (!first.is_number()) continue;
    std::vector<double> values;
    for (const json& r : runs) {
      const auto it = r.find(key);
      if (it != r.end() && it->is_number() && std::isfinite(it->get<double>()))
        values.push_back(it->get<double>());
    }
    // A figure some run lacks (or an infinite rate) is the first run's.
    if (values.size() != runs.size()) continue;
    const metrics::RepeatStats s = metrics::repeat_stats(values);
    // An integer key stays an integer for vLLM's readers; the exact mean is in the repeats.
    result[key] = first.is_number_float() ? json(s.mean) : json(std::llround(s.mean));
    repeats[key] = {{"mean", s.mean},
                    {"sd", s.sd},
                    {"ci95_low", s.ci_low},
                    {"ci95_high", s.ci_high},
                    {"n", s.n}};
  }
  json per_run = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    json r = runs[i];
    for (const char* key : kPerRequest) r.erase(key);
    r["run"] = i + 1;
    r["seed"] = i < seeds.size() ? json(seeds[i]) : json(nullptr);
    per_run.push_back(std::move(r));
  }
  json& ours = result["servebench"];
  ours["runs"] = std::move(per_run);
  ours["repeats"] = std::move(repeats);
  ours["repeat_method"] = {
      {"num_runs", runs.size()},
      {"requested_runs", c.num_runs},
      {"top_level", "mean across runs (integers rounded); per-request arrays concatenated"},
      {"sd", "sample (n - 1)"},
      {"interval", "95% for the mean, Student's t with n - 1 degrees of freedom"},
      {"arrival_seeds", c.seed_given ? "fixed by --seed: every run has the same send times"
                                     : "fresh: --seed + run index (0-based)"},
      {"warmups", "once, before the first run"}};
  return result;
}

nlohmann::json ramp_up_json(const schedule::RampUp& ramp_up,
                            const std::vector<client::PlannedRequest>& plan) {
  int64_t last_due_ns = 0;
  size_t requests = 0;
  for (const client::PlannedRequest& p : plan) {
    if (p.turn != 0) continue;  // a ramp counts first turns only
    ++requests;
    last_due_ns = std::max(last_due_ns, p.intended_ns);
  }
  return {{"strategy", schedule::ramp_up_strategy_name(ramp_up.strategy)},
          {"start_rps", ramp_up.start_rps},
          {"end_rps", ramp_up.end_rps},
          {"requests", requests},
          {"last_due_s", static_cast<double>(last_due_ns) / 1e9}};
}

nlohmann::json stage_json(const Spec& point) {
  const schedule::LoadStage& stage = point.stages.at(static_cast<size_t>(point.stage_index));
  return {{"index", point.stage_index},
          {"name", stage_name(point.stage_index)},
          {"count", point.stages.size()},
          {"rate", stage.rate},
          {"duration_s", stage.duration_s},
          {"requests", schedule::stage_request_count(stage)},
          {"arrival", stage_arrival_name(point.stage_arrival)},
          {"interval_s", point.stage_interval_s}};
}

nlohmann::json target_json(const Spec& t) {
  const size_t index = t.coordination ? t.coordination->index : 0;
  return {{"index", index},
          {"name", "target" + std::to_string(index + 1)},
          {"count", t.coordination ? t.coordination->count : 1},
          {"url", url_for_messages(t.base_url)},
          {"embedded", t.embedded},
          {"seed", t.seed}};
}

nlohmann::json load_json(const Spec& c, const TrimmedRun& trimmed, const StopOutcome& stop,
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

nlohmann::json combined_json(const CombinedFigures& f, const std::vector<nlohmann::json>& results) {
  nlohmann::json targets = nlohmann::json::array();
  for (const nlohmann::json& r : results) {
    const nlohmann::json ours = r.value("servebench", nlohmann::json::object());
    nlohmann::json target = ours.value("target", nlohmann::json::object());
    target["result_file"] = ours.value("result_file", nlohmann::json(nullptr));
    targets.push_back(std::move(target));
  }
  return {{"servebench_combined",
           {{"definition",
             "sums over the targets; wall_s = the longest target duration from the common t0; "
             "throughputs = sums / wall_s"},
            {"targets", f.targets},
            {"completed", f.completed},
            {"failed", f.failed},
            {"total_input_tokens", f.input_tokens},
            {"total_output_tokens", f.output_tokens},
            {"wall_s", f.wall_s},
            {"request_throughput", f.request_throughput},
            {"output_throughput", f.output_throughput},
            {"total_token_throughput", f.total_token_throughput},
            {"per_target", std::move(targets)}}}};
}

}  // namespace servebench::run
