// File: run/result_json.h
// Assembling a point's result JSON: vLLM's keys (report::vllm_result_json, from the RunInfo made
// here) and servebench's own section ("servebench": client state, files, dataset, server
// metrics, stage, ramp-up, target, load); vLLM's args for the PyTorch side file; the combined
// figures of several targets. Every key the run adds to a result is written in this file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "metrics/metrics.h"
#include "record/record.h"
#include "report/report.h"
#include "run/load_rules.h"
#include "run/output_files.h"
#include "run/point_setup.h"
#include "run/run.h"
#include "server_metrics/server_metrics.h"

namespace servebench::run {

// What executing one point produced (point.cpp), from which its result is assembled.
struct PointOutcome {
  std::vector<record::RequestRecord> records;  // sent requests, in completion order
  client::ClientStats stats;
  size_t not_sent = 0;  // left unsent after Ctrl-C, a stop rule or the end of --duration
  bool interrupted = false;
  StopOutcome stop;               // the stop rule that ended the run, if any
  nlohmann::json server_metrics;  // scraped during the run (server_metrics_recorder.h); null if off
  std::optional<server_metrics::SpecDecodeStats> spec_decode;  // from those scrapes
  std::optional<report::ProbeStats> probes;                    // --probe-request-rate
  std::vector<report::RpsChangeEvent> rps_change_events;       // with a ramp-up (ramp_up.h)
  nlohmann::json ramp_up;  // servebench's "ramp_up"; null if none
  nlohmann::json shard;    // servebench's "shard" (--shard, shard.h); null if unsharded
};

// vLLM's RunInfo of the point (what its console block and result JSON name), started at `date`.
report::RunInfo run_info(const Spec& c, const Target& target, const std::string& date,
                         const PointOutcome& m);

// The point's result: vLLM's keys and servebench's section.
nlohmann::json point_result_json(const Spec& c, const metrics::Summary& summary,
                                 const report::RunInfo& info,
                                 const std::vector<record::RequestRecord>& measured,
                                 const PointOutcome& m, const TrimmedRun& trimmed,
                                 const Paths& paths);

// The result of a point run several times (--num-runs; `runs` in order, each point_result_json's
// result; `seeds` each run's arrival seed). vLLM's top-level numbers are the mean across the runs
// (integers rounded to the nearest: their exact mean is in the repeats), its per-request arrays
// the runs' concatenated in run order, everything else the first run's. servebench's section
// adds "runs" (each run's result without the per-request arrays, with "run" and "seed"),
// "repeats" (each number of vLLM's: mean, sd, ci95_low, ci95_high, n) and "repeat_method".
nlohmann::json repeated_result_json(const Spec& c, const std::vector<nlohmann::json>& runs,
                                    const std::vector<uint64_t>& seeds);

// The run's arguments under vLLM's argparse names (headers left out: they may hold secrets).
nlohmann::json args_json(const Spec& c, const Target& t);

// The result JSON's servebench "ramp_up" section: the ramp, how many requests it spans, and
// when the last of them was due.
nlohmann::json ramp_up_json(const schedule::RampUp& ramp_up,
                            const std::vector<client::PlannedRequest>& plan);
// The servebench "stage" section of a stage point.
nlohmann::json stage_json(const Spec& point);
// The servebench "target" section of one target's result JSON.
nlohmann::json target_json(const Spec& target);
// The result JSON's servebench "load" section: profile, benchmark, bounds, what was excluded and
// why, and what stopped the point.
nlohmann::json load_json(const Spec& c, const TrimmedRun& trimmed, const StopOutcome& stop,
                         bool duration_ended);

// The combined figures of several targets' results (combine_results, targets.h).
struct CombinedFigures {
  size_t targets = 0;
  int64_t completed = 0, failed = 0, input_tokens = 0, output_tokens = 0;
  double wall_s = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
};
// The combined figures as saved beside the targets' results (`<label>-<date>.combined.json`
// with --save-result): the figures, and each target's name, URL and result file.
nlohmann::json combined_json(const CombinedFigures& combined,
                             const std::vector<nlohmann::json>& results);

}  // namespace servebench::run
