// One point, in vLLM's order (serve.py benchmark): warmups → the main run, each record appended
// to the records file as it finishes → vLLM's console block → result JSON.
#include "run/point.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "core/clock.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "report/report.h"
#include "run/coordination.h"
#include "run/interrupt.h"
#include "run/live.h"
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
  core::throw_if_interrupted("warmups");  // the warmups' records are in the records file
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
  // --live in a terminal (one target: several share one combined bar, targets.cpp).
  const bool live = !c.coordination && live_view_usable(c);
  std::optional<server_metrics::SamplerOptions> sampling = scrape;
  if (sampling && live) sampling->keep_latest = true;  // the view shows the last scrape
  ServerMetricsRecorder server_metrics(std::move(sampling));
  server_metrics.start();
  if (c.probe_request_rate > 0) {
    std::printf("Probe request rate: %s req/s\n", python_float(c.probe_request_rate).c_str());
    std::fflush(stdout);
  }
  ProbeLoop probes(c.probe_request_rate, ep, body, options, tok);
  probes.start();
  ProgressBar bar(plan.size(), !live && !c.disable_tqdm && !stopping());
  std::unique_ptr<LiveView> view;
  if (live) view = std::make_unique<LiveView>(c, plan, &server_metrics);
  client::RunOptions writing_records = records_file.flushing(options);
  if (view) writing_records.live = view->counters();
  m.stats = client::run(ep, body, plan, writing_records, tok, [&](record::RequestRecord&& r) {
    // Stopped before it was sent (SIGINT/SIGTERM, a stop rule, the end of --duration): not
    // part of the run.
    if (r.sent_ns < 0 && (stopping() || c.limits.duration_s > 0)) {
      ++m.not_sent;
      return;
    }
    stop_rules.observe(r);
    records_file.append(r);
    if (view) view->observe(r);
    m.records.push_back(std::move(r));
    bar.update();
    if (c.coordination) c.coordination->on_record();  // several targets' combined bar
  });
  records_file.flush();
  bar.close();
  if (view) view->stop();
  m.probes = probes.stop();
  m.server_metrics = server_metrics.stop(m.stats.t0_mono_ns, c.save_detailed);
  m.spec_decode = server_metrics.spec_decode();
  if (c.ramp_up) {
    m.rps_change_events =
        rps_change_events(*c.ramp_up, plan, core::wall_ns_at_mono(m.stats.t0_mono_ns));
    m.ramp_up = ramp_up_json(*c.ramp_up, plan);
  }
  m.interrupted = core::interrupted();
  m.stop = stop_rules.outcome();
  if (stop_rules.tripped() && !m.interrupted) g_stop.store(false);  // a sweep goes on
  if (m.interrupted) {
    std::fprintf(stderr,
                 "servebench: stopped by %s in the main run: %zu of %zu requests were sent; the "
                 "summary, result and records cover those\n",
                 core::interrupt_name(), m.records.size(), plan.size());
  }
  return m;
}

// Prints the point's console blocks and returns its result.
nlohmann::json report_point(const Spec& c, const Target& target, const std::string& date,
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
  return point_result_json(c, summary, info, measured, m, trimmed, paths);
}

// Saves the point's result when asked (and vLLM's PyTorch side file when its variable is set).
void save_point_result(const Spec& c, const Target& target, const Paths& paths,
                       const nlohmann::json& result) {
  if (paths.result.empty()) return;
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

// Run k's records file (--num-runs): "<stem>.run<k>.jsonl" beside the one a single run writes.
std::string run_records_path(const std::string& records, int run) {
  if (records.empty()) return records;
  const fs::path path(records);
  const std::string ext = path.extension().string();
  return (path.parent_path() / path.stem()).string() + fmt::format(".run{}", run) +
         (ext.empty() ? ".jsonl" : ext);
}

client::RunOptions point_options(const Spec& point) {
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
  return options;
}

// --num-runs N: the point run N times against the server as it is. The prompts are the same
// every run; the send times are drawn with --seed + run index unless --seed was given (then
// every run has the same ones). Warmups run once, before the first run: they bring a cold
// server to its steady state, and later runs start from the state the previous run left, as
// AIPerf's multi-run does by default. Each run prints its blocks and writes its own records
// file; the repeats block and the one result (repeated_result_json) follow. Several targets
// and shards are refused by the command line.
PointResult execute_repeated_point(const Spec& point, const Target& target,
                                   const tokenizer::Tokenizer& tok,
                                   const std::vector<dataset::Prompt>& prompts,
                                   const client::BodyOptions& body,
                                   const std::optional<server_metrics::SamplerOptions>& scrape,
                                   const std::string& date) {
  const Paths paths = output_paths(point, target.model_id, date);
  const client::RunOptions options = point_options(point);
  std::vector<nlohmann::json> results;
  std::vector<uint64_t> seeds;
  PointResult done;
  for (int k = 0; k < point.num_runs; ++k) {
    Spec run = point;
    if (!point.seed_given) run.seed = point.seed + static_cast<uint64_t>(k);
    Paths run_paths = paths;
    run_paths.records = run_records_path(paths.records, k + 1);
    // run_paths.result stays: each run's records_file is named as beside it; only the combined
    // result is saved there.
    size_t not_due = 0;  // asked for, but due after --duration ends: never sent
    const std::vector<client::PlannedRequest> plan = make_plan(run, prompts, &not_due);
    RecordsFile records_file(run_paths.records, run_paths.records_flag);
    if (k == 0) run_warmups(point, target.endpoint, body, plan.front(), options, tok, records_file);
    run.num_warmups = k == 0 ? point.num_warmups : 0;
    std::printf("\nRun %d of %d (arrival seed %llu)\n", k + 1, point.num_runs,
                static_cast<unsigned long long>(run.seed));
    const std::string run_started = core::wall_timestamp_compact();
    PointOutcome outcome =
        run_main(run, target.endpoint, body, plan, options, tok, records_file, scrape);
    outcome.not_sent += not_due;
    results.push_back(report_point(run, target, run_started, run_paths, outcome));
    seeds.push_back(run.seed);
    if (outcome.interrupted) {  // the runs done so far are the result
      done.interrupted = true;
      break;
    }
  }
  done.result = repeated_result_json(point, results, seeds);
  if (!paths.result.empty()) done.result["servebench"]["result_file"] = paths.result;
  std::fputs(report::repeats_console_block(done.result).c_str(), stdout);
  std::fflush(stdout);
  save_point_result(point, target, paths, done.result);
  done.result_file = paths.result;
  return done;
}

}  // namespace

PointResult execute_point(const Spec& point, const Target& target, const tokenizer::Tokenizer& tok,
                          const std::vector<dataset::Prompt>& prompts,
                          const client::BodyOptions& body,
                          const std::optional<server_metrics::SamplerOptions>& scrape,
                          const std::string& date) {
  warn_if_too_few_files(point);  // before the point's files: a refusal leaves none behind
  if (point.num_runs > 1)
    return execute_repeated_point(point, target, tok, prompts, body, scrape, date);
  const Paths paths = output_paths(point, target.model_id, date);
  size_t not_due = 0;  // asked for, but due after --duration ends: never sent
  std::vector<client::PlannedRequest> plan = make_plan(point, prompts, &not_due);
  const ShardedPlan sharded = take_shard(point, plan);
  RecordsFile records_file(paths.records, paths.records_flag);
  client::RunOptions options = point_options(point);

  run_warmups(point, target.endpoint, body, plan.front(), options, tok, records_file);
  if (point.coordination) {  // several targets: the main run's t0 is common (targets.cpp)
    options.t0_gate = [&point, &plan] { return point.coordination->start_gate(plan.size()); };
  }
  ShardStart shard_start;
  if (point.shard.count > 0) {  // a shard: t0 at --start-at, both clocks read (shard.h)
    options.t0_gate = [&point, &shard_start] {
      shard_start = start_shard(point.shard, g_stop);
      core::throw_if_interrupted("waiting for --start-at");
      return shard_start.t0_mono_ns;
    };
  }
  // The result's "date" is when this benchmark started (a sweep's files share `date`).
  const std::string started = core::wall_timestamp_compact();
  PointOutcome outcome =
      run_main(point, target.endpoint, body, plan, options, tok, records_file, scrape);
  // A shard's plan is its share of the whole one; the requests past the duration are the whole
  // plan's, counted once, by the first shard.
  if (point.shard.count == 0 || point.shard.index == 0) outcome.not_sent += not_due;
  if (point.shard.count > 0)
    outcome.shard = shard_json(point, shard_start, sharded.hash, plan.size(), paths.records);
  if (point.coordination) point.coordination->before_report(point.base_url);
  PointResult done;
  done.result = report_point(point, target, started, paths, outcome);
  save_point_result(point, target, paths, done.result);
  if (point.coordination) point.coordination->after_report(done.result);
  done.result_file = paths.result;
  done.interrupted = outcome.interrupted;
  return done;
}

}  // namespace servebench::run
