// File: cli/run_config.h
// Everything `servebench run` was asked to do, validated: run_command.cpp fills it from the
// flags (every usage error is found there, before anything starts); run_execute.cpp carries it
// out. Internal to the cli part.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "dataset/dataset.h"
#include "sim/sim.h"

namespace servebench::cli::run {

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
  dataset::DatasetOptions dataset;    // --dataset-name and every dataset's flags
  double trace_time_scale = 1.0;      // trace datasets: --trace-time-scale
  double request_rate = 0;            // inf allowed; the current run's value of the list below
  std::vector<double> request_rates;  // --request-rate list: one run per value (× concurrency)
  double burstiness = 1.0;
  int max_concurrency = 0;             // 0 = none; the current run's value of the list below
  std::vector<int> max_concurrencies;  // --max-concurrency list ({0} when not given)
  int max_active_conversations = 0;    // --max-active-conversations (multi-turn); 0 = none
  int num_conversations = 0;           // multi-turn: conversations the dataset gave (set by run)
  uint64_t seed = 0;

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
  double drain_timeout_s = 10;

  // --- embedded simulator (--sim-*)
  sim::Options sim;
  std::string sim_description;  // for the stderr notice, e.g. "fixed TTFT 50 ms, ITL 10 ms"
};

// Runs the benchmark; returns the exit code (0 when it finished, even with failed requests;
// 130 after SIGINT). Throws core::Error for an unreachable server or an unusable target.
int execute_run(RunConfig config);

}  // namespace servebench::cli::run
