// File: run/run.h
// The benchmark below the command line: a typed spec of one `servebench run` (target, dataset,
// load shape, outputs) and the entry point that carries it out as one or more points: a
// --request-rate / --max-concurrency list, GuideLLM's profiles, inference-perf's stages, an SLO
// search, several targets at once; each point with its probes and server-metrics sampling.
// Inside: planning (which points: sequence, stages, search, targets, sweep) → executing one
// point (point*.cpp: prompts, plan, client, metrics) → its result JSON (result_json.cpp).
// It never sees argv: `cli` turns flags into a Spec. Also public: run/names.h (what both print),
// run/kinds.h (vLLM's latency and throughput benchmarks as runs).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "dataset/dataset.h"
#include "metrics/transient.h"
#include "schedule/schedule.h"
#include "sim/sim.h"

namespace servebench::run {

// GuideLLM's profile types (guidellm/benchmark/profile.py); kNone = vLLM's traffic.
enum class LoadProfile {
  kNone,
  kSynchronous,
  kThroughput,
  kConcurrent,
  kConstant,
  kPoisson,
  kSweep
};

// What bounds and shapes a run besides vLLM's flags: GuideLLM's --profile/--rate, --duration,
// warmup/cooldown windows left out of the metrics, stop rules (--max-errors, --max-error-rate).
struct RunLimits {
  LoadProfile profile = LoadProfile::kNone;
  // --rate as GuideLLM reads it: concurrent = streams, constant/poisson = requests per second
  // (a list runs one benchmark each), throughput = its max concurrency, sweep = {benchmarks}.
  std::vector<double> rates;
  int sweep_size = 10;
  double duration_s = 0;              // --duration; 0 = bounded by the request count only
  size_t max_requests = 0;            // the plan's size cap (--num-prompts)
  bool max_requests_given = false;    // --num-prompts was given (else a rate × duration sizes it)
  metrics::TransientSpec transients;  // warmup/cooldown (run_duration_s and planned set per run)
  int64_t max_errors = 0;             // --max-errors; 0 = none
  double max_error_rate = 0;          // --max-error-rate in (0, 1); 0 = none
  size_t error_rate_window = 30;      // GuideLLM's MaxErrorRateConstraint window
  // --- the benchmark being run (set per point by the planning)
  LoadProfile strategy = LoadProfile::kNone;  // synchronous … poisson; kNone = vLLM's traffic
  std::string benchmark;  // GuideLLM's name: "synchronous", "constant@1.25", …
  size_t sequence = 0;    // its place in the profile's benchmarks (0-based)

  bool bounds_plan() const { return profile != LoadProfile::kNone || duration_s > 0; }
};

// --search-slo: the highest request rate (or max concurrency) meeting the SLOs.
struct SearchPlan {
  std::map<std::string, double> slo_ms;  // metric → SLO (ms), as --goodput
  bool concurrency = false;              // search the max concurrency, not the rate
  double attainment = 0.9;               // fraction of requests sent within every SLO
  int max_runs = 8;
};

// --shard K/N and --start-at (docs/run.md "Shards"): this process sends the requests of the plan
// that shard K of N owns; every shard computes the whole plan from the same flags.
struct Shard {
  int index = 0, count = 0;            // count 0 = not sharded
  std::optional<int64_t> start_at_ns;  // --start-at (unix ns): the first point waits for it
};
// Reads an environment variable; nullopt when unset.
using Environment = std::function<std::optional<std::string>(const std::string&)>;
// --shard's value: "K/N", "auto" or "auto/N" (K, and N unless given, from the environment:
// JOB_COMPLETION_INDEX with SERVEBENCH_SHARDS, SLURM_ARRAY_TASK_*, SLURM_PROCID/SLURM_NTASKS).
// Throws core::Error (kUsage) naming --shard or the variable.
Shard parse_shard(const std::string& value, const Environment& env);
// --start-at: unix seconds (decimals allowed) or ISO 8601 ("2026-11-26T09:00:00.5Z", "+01:00";
// UTC without a zone). Throws core::Error (kUsage) naming --start-at.
int64_t parse_start_at_ns(const std::string& value);

struct TargetCoordination;  // how one target's run meets the others' (run part internal)

struct Spec {
  // --- target
  std::string backend = "openai";  // as given: openai, vllm or openai-chat
  std::string label;               // --label; "" = none (the file name then uses backend)
  client::Api api = client::Api::kCompletions;
  bool embedded = false;  // no --base-url/--host/--port: start sim::Server in-process
  std::string base_url;   // scheme://host:port[/prefix], no trailing '/'; set after sim starts
  std::string endpoint = "/v1/completions";
  std::vector<std::string> headers;  // "Name: value"
  std::string api_key;               // $OPENAI_API_KEY; never printed
  bool insecure = false;
  std::string ca_file;  // --ca-cert; "" = $CURL_CA_BUNDLE, $SSL_CERT_FILE, libcurl's
  std::string model, served_model_name;  // "" = ask the server (or the embedded default); model
  std::string tokenizer;                 // as given; "" = model when found locally

  // --- dataset and traffic
  int num_prompts = 1000;
  int num_prompts_requested = 1000;  // before the dataset gave fewer (set per run)
  dataset::DatasetOptions dataset;
  double trace_time_scale = 1.0;
  bool self_timed = false;            // a trace dataset sent at its own timestamps
  double probe_request_rate = 0;      // vLLM's --probe-request-rate; 0 = none
  double request_rate = 0;            // inf allowed; the current point's value of the list
  std::vector<double> request_rates;  // one point per value (× concurrency)
  double burstiness = 1.0;
  std::optional<schedule::RampUp> ramp_up;  // each request's rate from the ramp; rate is inf
  int max_concurrency = 0;                  // 0 = none; the current point's value of the list
  std::vector<int> max_concurrencies;       // ({0} when not given)
  int max_active_conversations = 0;         // multi-turn; 0 = none
  int num_conversations = 0;                // multi-turn: what the dataset gave (set per run)
  uint64_t seed = 0;
  bool seed_given = false;  // --seed was given: repeated runs share its arrival times
  // --num-runs: each point run this many times (same prompts; arrivals drawn with seed + run
  // index unless seed_given; warmups once, before the first run), then the figures' mean, sd and
  // 95% Student's t interval across runs (docs/metrics.md "Repeated runs").
  int num_runs = 1;
  // 32-bit words the dataset drew from numpy's global generator after seeding it (vLLM's
  // prefix_repetition does); vLLM's arrival gaps continue from there (set per run).
  uint64_t numpy_words_drawn = 0;
  RunLimits limits;

  // --- request bodies
  bool ignore_eos = false, temperature_given = false;
  // The "no --temperature" warning; a suite says it once for all its tests instead.
  bool warn_no_temperature = true;
  std::string extra_body_json;  // sampling values merged under --extra-body; "" = none
  std::string request_id_prefix;

  // --- measuring and reporting
  std::vector<std::string> percentile_metrics;
  std::vector<double> percentiles;
  std::map<std::string, double> goodput_slo_ms;
  std::vector<std::pair<std::string, std::string>> metadata;
  bool save_result = false, save_detailed = false, append_result = false;
  std::string result_dir, result_filename;
  std::string records_path;  // "" = beside the result when one is saved
  bool disable_tqdm = false;
  bool live = false;  // --live: the block redrawn in place while the main run goes on (live.h)
  int num_warmups = 0, io_threads = 1;
  double ready_check_timeout_s = 0;
  client::HttpEngine http_engine = client::HttpEngine::kAuto;
  bool kernel_arrival_times = true;
  double drain_timeout_s = 10, request_timeout_s = 6 * 3600;
  std::string server_metrics = "auto";  // auto, off, or URLs (comma-separated)
  double server_metrics_interval_s = 0.333;

  // --- embedded simulator
  sim::Options sim;
  std::string sim_description;  // for the stderr notice, e.g. "fixed TTFT 50 ms, ITL 10 ms"

  // --- an embedded simulated deployment (--sim-deployment): one target per frontend
  std::string sim_deployment;  // the deployment file; "" = none (c.sim applies to every frontend)
  struct Deployment {
    std::string name, file, content;         // the file's `name`, path as given, and text
    std::vector<std::string> frontend_urls;  // http://host:port of each frontend
  };
  std::shared_ptr<const Deployment> deployment;  // set by execute once it serves

  // --- several targets at once: one run per target, all from one t0
  std::vector<std::string> target_urls;              // more than one = several targets
  std::vector<std::string> target_models;            // per target; empty = `model` for every one
  int sim_instances = 1;                             // embedded simulators, one target each
  std::shared_ptr<TargetCoordination> coordination;  // set on each target's own run

  // --- inference-perf stages: one point per stage, in order; empty = none
  std::vector<schedule::LoadStage> stages;
  schedule::StageArrival stage_arrival = schedule::StageArrival::kConstant;
  double stage_interval_s = 1.0;  // pause between stages
  int stage_index = -1;           // the current point's stage; -1 = not a stage run

  std::optional<SearchPlan> search;  // --search-slo: the points are the search's probes
  Shard shard;                       // --shard: this process's share of the plan
};

// Runs the benchmark; returns the exit code (0 when it finished, even with failed requests;
// 130 after SIGINT). Throws core::Error for an unreachable server or an unusable target.
int execute(Spec spec);

// Whether the spec has more than one target (and is not one target's own run).
bool runs_several_targets(const Spec& spec);

}  // namespace servebench::run
