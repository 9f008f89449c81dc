// File: cli/run_config.h
// Everything `servebench run` was asked to do, validated: run_command.cpp fills it from the
// flags (every usage error is found there, before anything starts); run_execute.cpp carries it
// out. Internal to the cli part.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_limits.h"
#include "client/client.h"
#include "dataset/dataset.h"
#include "schedule/schedule.h"
#include "sim/sim.h"

namespace servebench::cli::run {

// How one target's run of a multi-target run (run_targets.cpp) meets the others: each hook is
// called by that target's own run_execute.cpp flow.
struct TargetCoordination {
  size_t index = 0, count = 1;  // this target (0-based) of how many
  std::string url;              // its base URL without credentials (url_for_messages)
  // Ends this target's setup (the next target's starts) and waits for every target to be
  // ready: returns the common t0 (core::mono_ns). `planned` = this target's requests.
  std::function<int64_t(size_t planned)> start_gate;
  std::function<void()> on_record;  // one of this target's requests finished (combined bar)
  // Waits until every target's run has ended and the targets before this one have printed,
  // then prints this target's heading (its base URL, shown without credentials).
  std::function<void(const std::string& base_url)> before_report;
  // This target's result is out: hands it over (combined figures) and lets the next print.
  std::function<void(const nlohmann::json& result)> after_report;
};

struct RunConfig {
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
  std::string model;              // --model; "" = ask the server (or the embedded default)
  std::string served_model_name;  // --served-model-name; "" = model
  std::string tokenizer;          // --tokenizer as given; "" = --model when found locally

  // --- dataset and traffic
  int num_prompts = 1000;
  // num_prompts before the dataset gave fewer (set by run): vLLM's result records what was asked.
  int num_prompts_requested = 1000;
  dataset::DatasetOptions dataset;  // --dataset-name and every dataset's flags
  double trace_time_scale = 1.0;    // trace datasets: --trace-time-scale
  // A trace dataset sent at its own timestamps (vLLM's self-timed; off with --no-self-timed).
  bool self_timed = false;
  double probe_request_rate = 0;      // vLLM's --probe-request-rate (run_probes.h); 0 = none
  double request_rate = 0;            // inf allowed; the current run's value of the list below
  std::vector<double> request_rates;  // --request-rate list: one run per value (× concurrency)
  double burstiness = 1.0;
  // --ramp-up-strategy (run_ramp_up.h): each request's rate from the ramp; request_rate is inf.
  std::optional<schedule::RampUp> ramp_up;
  int max_concurrency = 0;             // 0 = none; the current run's value of the list below
  std::vector<int> max_concurrencies;  // --max-concurrency list ({0} when not given)
  int max_active_conversations = 0;    // --max-active-conversations (multi-turn); 0 = none
  int num_conversations = 0;           // multi-turn: conversations the dataset gave (set by run)
  uint64_t seed = 0;
  RunLimits limits;  // GuideLLM's --profile/--rate, --duration, warmup/cooldown, stop rules

  // --- request bodies
  bool ignore_eos = false;
  bool temperature_given = false;
  std::string extra_body_json;  // sampling flags merged under --extra-body; "" = none
  std::string request_id_prefix;

  // --- measuring and reporting
  std::vector<std::string> percentile_metrics;
  std::vector<double> percentiles;
  std::map<std::string, double> goodput_slo_ms;
  std::vector<std::pair<std::string, std::string>> metadata;
  bool save_result = false, save_detailed = false, append_result = false;
  std::string result_dir, result_filename;
  std::string records_path;  // --records; "" = beside the result when one is saved
  bool disable_tqdm = false;
  int num_warmups = 0;
  double ready_check_timeout_s = 0;
  int io_threads = 1;
  client::HttpEngine http_engine = client::HttpEngine::kAuto;
  bool kernel_arrival_times = true;  // --arrival-clock kernel|read
  double drain_timeout_s = 10;
  double request_timeout_s = 6 * 3600;  // --request-timeout-sec (client::Endpoint::timeout_s)
  std::string server_metrics = "auto";  // --server-metrics: auto, off, or URLs (comma-separated)
  double server_metrics_interval_s = 0.333;

  // --- embedded simulator (--sim-*)
  sim::Options sim;
  std::string sim_description;  // for the stderr notice, e.g. "fixed TTFT 50 ms, ITL 10 ms"

  // --- several targets at once (run_targets.h): one run per target, all from one t0
  std::vector<std::string> target_urls;    // every --base-url; more than one = several targets
  std::vector<std::string> target_models;  // --model per target; empty = `model` for every one
  int sim_instances = 1;                   // --sim-instances: embedded simulators, one target each
  std::shared_ptr<TargetCoordination> coordination;  // set on each target's own run

  // --- inference-perf stages (run_stages.h): one run per stage, in order; empty = none
  std::vector<schedule::LoadStage> stages;
  schedule::StageArrival stage_arrival = schedule::StageArrival::kConstant;
  double stage_interval_s = 1.0;  // pause between stages (inference-perf's load.interval)
  int stage_index = -1;           // the current run's stage; -1 = not a stage run
};

// Runs the benchmark; returns the exit code (0 when it finished, even with failed requests;
// 130 after SIGINT). Throws core::Error for an unreachable server or an unusable target.
int execute_run(RunConfig config);

}  // namespace servebench::cli::run
