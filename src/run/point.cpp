// One point, in vLLM's order (serve.py benchmark): warmups → the main run, each record appended
// to the records file as it finishes → vLLM's console block → result JSON.
#include "run/point.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "report/report.h"
#include "run/coordination.h"
#include "run/interrupt.h"
#include "run/load_rules.h"
#include "run/names.h"
#include "run/output_files.h"
#include "run/probes.h"
#include "run/progress.h"
#include "run/ramp_up.h"
#include "run/result_json.h"
#include "run/send_times.h"
#include "run/server_metrics_recorder.h"
#include "run/shard.h"
#include "run/stages.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

void run_warmups(const Spec& c, const client::Endpoint& ep, const client::BodyOptions& body,
                 const client::PlannedRequest& first, const client::RunOptions& options,
                 const tokenizer::Tokenizer& tok, RecordsFile& records) {
  if (c.num_warmups <= 0) return;
  std::printf("Warming up with %d requests...\n", c.num_warmups);
  std::fflush(stdout);
  std::vector<client::PlannedRequest> warm(static_cast<size_t>(c.num_warmups), first);
  for (size_t i = 0; i < warm.size(); ++i) {
    warm[i].index = static_cast<uint64_t>(c.num_prompts) + i;  // after the measured ones
    warm[i].intended_ns = 0;
    warm[i].warmup = true;
    warm[i].conversation = -1;  // single requests, even when the first is a conversation's
    warm[i].turn = 0;
    warm[i].follows = -1;
  }
  ProgressBar bar(warm.size(), !c.disable_tqdm);
  client::run(ep, body, warm, records.flushing(options), tok, [&](record::RequestRecord&& r) {
    records.append(r);
    bar.update();
  });
  records.flush();
  bar.close();
  std::printf("Warmup run completed.\n");
}

void print_failures(const std::vector<record::RequestRecord>& records) {
  std::vector<std::pair<uint64_t, std::string>> failed;
  for (const auto& r : records) {
    if (!r.success) failed.emplace_back(r.index, r.error);
  }
  if (failed.empty()) return;
  std::printf("Failed requests during benchmark run detected (capping to 10):\n%s",
              first_errors_text(std::move(failed)).c_str());
}

// The main run: the client sends the plan while probes and server-metrics sampling go on.
PointOutcome run_main(const Spec& c, const client::Endpoint& ep, const client::BodyOptions& body,
                      const std::vector<client::PlannedRequest>& plan,
                      const client::RunOptions& options, const tokenizer::Tokenizer& tok,
                      RecordsFile& records_file,
                      const std::optional<server_metrics::SamplerOptions>& scrape) {
  std::printf("Starting main benchmark run...\n");
  if (c.stage_index >= 0) {
    std::fputs(stage_traffic_lines(c).c_str(), stdout);
  } else if (c.self_timed) {
    std::printf("Traffic: replaying the trace's timestamps (time scale %s, last send at %.3f s)\n",
                python_float(c.trace_time_scale).c_str(),
                plan.empty() ? 0.0 : static_cast<double>(plan.back().intended_ns) / 1e9);
  } else {
    if (c.ramp_up) {
      std::fputs(ramp_up_traffic_lines(*c.ramp_up).c_str(), stdout);
    } else {
      std::printf("Traffic request rate: %s\n", python_float(c.request_rate).c_str());
    }
    std::printf("Burstiness factor: %s (%s)\n", python_float(c.burstiness).c_str(),
                c.burstiness == 1.0 ? "Poisson process" : "Gamma distribution");
  }
  std::printf("Maximum request concurrency: %s\n",
              c.max_concurrency > 0 ? std::to_string(c.max_concurrency).c_str() : "None");
  if (c.dataset.sharegpt.multi_turn) {
    std::printf("Multi-turn: %d conversations, %zu turns; maximum active conversations: %s\n",
                c.num_conversations, plan.size(),
                c.max_active_conversations > 0 ? std::to_string(c.max_active_conversations).c_str()
                                               : "None");
  }
  std::fputs(load_header_lines(c).c_str(), stdout);
  std::fflush(stdout);

  PointOutcome m;
  m.records.reserve(plan.size());
  StopRules stop_rules(c.limits, &g_stop);
  ServerMetricsRecorder server_metrics(scrape);
  server_metrics.start();
  if (c.probe_request_rate > 0) {
    std::printf("Probe request rate: %s req/s\n", python_float(c.probe_request_rate).c_str());
    std::fflush(stdout);
  }
  ProbeLoop probes(c.probe_request_rate, ep, body, options, tok);
  probes.start();
  ProgressBar bar(plan.size(), !c.disable_tqdm && !g_stop.load());
  const client::RunOptions writing_records = records_file.flushing(options);
  m.stats = client::run(ep, body, plan, writing_records, tok, [&](record::RequestRecord&& r) {
    // Stopped before it was sent (Ctrl-C, a stop rule, the end of --duration): not part of
    // the run.
    if (r.sent_ns < 0 && (g_stop.load() || c.limits.duration_s > 0)) {
      ++m.not_sent;
      return;
    }
    stop_rules.observe(r);
    records_file.append(r);
    m.records.push_back(std::move(r));
    bar.update();
    if (c.coordination) c.coordination->on_record();  // several targets' combined bar
  });
  records_file.flush();
  bar.close();
  m.probes = probes.stop();
  m.server_metrics = server_metrics.stop(m.stats.t0_mono_ns, c.save_detailed);
  m.spec_decode = server_metrics.spec_decode();
  if (c.ramp_up) {
    m.rps_change_events =
        rps_change_events(*c.ramp_up, plan, core::wall_ns_at_mono(m.stats.t0_mono_ns));
    m.ramp_up = ramp_up_json(*c.ramp_up, plan);
  }
  m.interrupted = g_interrupts.load() > 0;
  m.stop = stop_rules.outcome();
  if (stop_rules.tripped() && !m.interrupted) g_stop.store(false);  // a sweep goes on
  if (m.interrupted) {
    std::fprintf(stderr,
                 "servebench: interrupted: %zu of %zu requests were sent; the summary covers "
                 "those\n",
                 m.records.size(), plan.size());
  }
  return m;
}

// Prints the point's console blocks, saves its result when asked, and returns the result.
nlohmann::json report_and_save(const Spec& c, const Target& target, const std::string& date,
                               const Paths& paths, const PointOutcome& m) {
  print_failures(m.records);
  metrics::Options mo;
  mo.percentiles = c.percentiles;
  mo.goodput_slo_ms = c.goodput_slo_ms;
  mo.requested_rate = c.request_rate;
  // Warmup/cooldown windows (load_rules.h) leave records out of the metrics.
  const TrimmedRun trimmed = trim_transients(c, m.records);
  const std::vector<record::RequestRecord>& measured =
      trimmed.trimmed ? trimmed.measured : m.records;
  metrics::Summary summary =
      metrics::compute(measured, trimmed.trimmed ? trimmed.duration_s : m.stats.duration_s, mo);
  // The warmups ran before the main run (run_warmups): their records are in the records file
  // only, never in m.records.
  summary.extras.warmup_ignored += static_cast<size_t>(c.num_warmups);
  mark_excluded_records(paths.records, m.records, trimmed.split);
  std::fputs(load_console_lines(c, trimmed, m.stop).c_str(), stdout);
  if (measured.empty() && !m.records.empty()) {
    std::fprintf(stderr,
                 "servebench: warning: the warmup/cooldown windows left no request to measure; "
                 "narrow them or send more requests\n");
  } else if (summary.vllm.completed == 0) {
    std::fprintf(stderr,
                 "servebench: warning: every request failed; check the benchmark arguments\n");
  }
  const report::RunInfo info = run_info(c, target, date, m);
  std::fputs(report::vllm_console_block(summary, info).c_str(), stdout);
  std::fputs(report::extras_console_block(summary, info).c_str(), stdout);
  if (!m.server_metrics.is_null()) {
    std::fputs(report::server_metrics_console_block(m.server_metrics).c_str(), stdout);
    const std::string lag = report::sim_lag_warning(m.server_metrics);
    if (!lag.empty()) std::printf("%s\n", lag.c_str());
  }
  std::fflush(stdout);
  nlohmann::json result = point_result_json(c, summary, info, measured, m, trimmed, paths);
  if (paths.result.empty()) return result;
  save_result(paths.result, result, c.append_result, paths.result_flag);
  // vLLM writes its PyTorch-benchmark side file only when this variable is set.
  if (std::getenv("SAVE_TO_PYTORCH_BENCHMARK_FORMAT")) {
    nlohmann::json pt =
        report::pytorch_benchmark_records(result, args_json(c, target), target.model_id);
    if (!pt.empty()) {
      std::string stem = fs::path(paths.result).replace_extension().string();
      save_result(stem + ".pytorch.json", pt, false, paths.result_flag);
    }
  }
  return result;
}

// A shard's part of the whole plan (shard.h), said on the console; the whole plan's hash.
struct ShardedPlan {
  std::string hash;  // "" when not sharded
};
ShardedPlan take_shard(const Spec& c, std::vector<client::PlannedRequest>& plan) {
  if (c.shard.count == 0) return {};
  ShardedPlan s{plan_hash(c, plan)};
  const size_t whole = plan.size();
  plan = shard_plan(plan, c.shard.index, c.shard.count);
  if (plan.empty())
    throw core::Error(core::ErrorKind::kUsage, "--shard",
                      fmt::format("shard {} of {} owns none of the plan's {} requests; give fewer "
                                  "shards or more requests",
                                  c.shard.index, c.shard.count, whole));
  const int cap = shard_share(c.max_concurrency, c.shard.index, c.shard.count);
  std::printf("Shard %d/%d: %zu of the plan's %zu requests (plan hash %s), max concurrency %s\n",
              c.shard.index, c.shard.count, plan.size(), whole, s.hash.c_str(),
              cap > 0 ? std::to_string(cap).c_str() : "None");
  return s;
}

}  // namespace

PointResult execute_point(const Spec& point, const Target& target, const tokenizer::Tokenizer& tok,
                          const std::vector<dataset::Prompt>& prompts,
                          const client::BodyOptions& body,
                          const std::optional<server_metrics::SamplerOptions>& scrape,
                          const std::string& date) {
  const Paths paths = output_paths(point, target.model_id, date);
  std::vector<client::PlannedRequest> plan = make_plan(point, prompts);
  const ShardedPlan sharded = take_shard(point, plan);
  RecordsFile records_file(paths.records, paths.records_flag);
  client::RunOptions options;
  options.max_concurrency =
      shard_share(point.max_concurrency, point.shard.index, point.shard.count);
  options.max_active_conversations =
      shard_share(point.max_active_conversations, point.shard.index, point.shard.count);
  options.io_threads = point.io_threads;
  options.http_engine = point.http_engine;
  options.kernel_arrival_times = point.kernel_arrival_times;
  options.stop = &g_stop;
  options.drain_timeout_s = point.drain_timeout_s;
  options.max_duration_s = point.limits.duration_s;

  warn_if_too_few_files(point);
  run_warmups(point, target.endpoint, body, plan.front(), options, tok, records_file);
  if (point.coordination) {  // several targets: the main run's t0 is common (targets.cpp)
    options.t0_gate = [&point, &plan] { return point.coordination->start_gate(plan.size()); };
  }
  ShardStart shard_start;
  if (point.shard.count > 0) {  // a shard: t0 at --start-at, both clocks read (shard.h)
    options.t0_gate = [&point, &shard_start] {
      shard_start = start_shard(point.shard, g_stop);
      return shard_start.t0_mono_ns;
    };
  }
  // The result's "date" is when this benchmark started (a sweep's files share `date`).
  const std::string started = core::wall_timestamp_compact();
  PointOutcome outcome =
      run_main(point, target.endpoint, body, plan, options, tok, records_file, scrape);
  if (point.shard.count > 0)
    outcome.shard = shard_json(point, shard_start, sharded.hash, plan.size(), paths.records);
  if (point.coordination) point.coordination->before_report(point.base_url);
  PointResult done;
  done.result = report_and_save(point, target, started, paths, outcome);
  if (point.coordination) point.coordination->after_report(done.result);
  done.result_file = paths.result;
  done.interrupted = outcome.interrupted;
  return done;
}

}  // namespace servebench::run
