// File: cli/run_flags.h
// `servebench run`'s flags: vLLM's `vllm bench serve` flags (vllm/benchmarks/serve.py
// add_cli_args and datasets add_dataset_parser), same names and defaults, plus servebench's
// extras, turned into a run::Spec. The one flag→spec path: `run`, the suite's serving tests and
// the latency/throughput kinds all go through it. Internal to the cli part.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/load_flags.h"
#include "cli/ramp_up_flags.h"
#include "cli/stage_flags.h"
#include "run/run.h"

namespace CLI {
class App;
}

namespace servebench::cli {

// Flags as given, before conversion. Defaults are vLLM's.
struct RawFlags {
  std::string backend = "openai", endpoint_type, label, base_url, host = "127.0.0.1", port = "8000",
              endpoint = "/v1/completions";
  std::vector<std::string> header, metadata, goodput;
  std::string max_concurrency, model, served_model_name, tokenizer, tokenizer_mode = "auto";
  std::string input_len, output_len, dataset_name = "random", dataset_path;
  std::string num_prompts = "1000", seed = "0";
  std::string random_input_len = "1024", random_output_len = "128", random_range_ratio = "0.0",
              random_prefix_len = "0", random_token_rule = "vllm";
  bool no_oversample = false, disable_shuffle = false, skip_chat_template = false,
       custom_skip_chat_template = false, gsp_ordered = false;
  bool multi_turn = false;  // servebench: sharegpt conversations turn by turn
  std::string max_turns = "0", max_active_conversations;
  std::string sharegpt_output_len, custom_output_len = "256", sonnet_input_len = "550",
                                   sonnet_output_len = "150", sonnet_prefix_len = "200";
  std::string prefix_repetition_prefix_len = "256", prefix_repetition_suffix_len = "256",
              prefix_repetition_num_prefixes = "10", prefix_repetition_output_len = "128";
  std::string gsp_num_groups = "64", gsp_prompts_per_group = "16", gsp_system_prompt_len = "2048",
              gsp_question_len = "128", gsp_output_len = "256", gsp_range_ratio = "1.0";
  std::string timed_trace_chunk_hash_size = "16", timed_trace_sec_multiplier = "1",
              timed_trace_label_timestamp = "timestamp",
              timed_trace_label_input_length = "input_length",
              timed_trace_label_output_length = "output_length",
              timed_trace_label_hash_ids = "hash_ids";
  std::string trace_time_scale = "1.0", trace_block_tokens = "512";
  bool self_timed = false, no_self_timed = false;  // vLLM's --self-timed / --no-self-timed
  std::string request_rate = "inf", burstiness = "1.0";
  bool live = false;
  bool disable_tqdm = false, save_result = false, save_detailed = false, append_result = false,
       ignore_eos = false, insecure = false, trust_remote_code = false;
  std::string ca_cert;  // --ca-cert FILE
  std::string num_warmups = "0", result_dir, result_filename;
  std::string percentile_metrics, metric_percentiles = "99", request_id_prefix;
  std::string logprobs, probe_request_rate = "0.0";
  std::string top_p, top_k, min_p, temperature, frequency_penalty, presence_penalty,
      repetition_penalty;
  std::string ready_check_timeout_sec = "0", extra_body;
  // servebench
  std::string num_runs = "1";  // repeated runs of each point (docs/metrics.md "Repeated runs")
  std::string records, io_threads = "1", drain_timeout_sec = "10", http_engine = "auto";
  std::string request_timeout_sec = "21600";  // vLLM's aiohttp total timeout: 6 h
  std::string arrival_clock = "kernel";
  std::string server_metrics = "auto", server_metrics_interval = "0.333";
  std::string shard, start_at;  // --shard K/N|auto[/N], --start-at (docs/run.md "Shards")
  std::string sim_ttft_ms = "50", sim_itl_ms = "10", sim_ttft_jitter_ms = "0",
              sim_itl_jitter_ms = "0", sim_mode = "fixed", sim_engine_profile, sim_threads = "1",
              sim_trace_out;
  std::vector<std::string> sim_fault;
  LoadFlags load;                   // GuideLLM's load shapes (load_flags.h)
  std::string sim_instances = "1";  // several embedded simulators (target_flags.h)
  std::string sim_deployment;       // an embedded simulated deployment (docs/deployments.md)
  StageFlags stages;                // inference-perf's load stages (stage_flags.h)
  RampUpFlags ramp_up;              // vLLM's ramp-up (ramp_up_flags.h)
};

// Checks the flags as given to `sub` (the `run` subcommand, parsed) and turns them into the
// spec; every usage error is found here, before anything starts (core::Error kUsage naming the
// flag). The --search-* flags are the caller's (search_flags.h).
run::Spec spec_from_flags(const RawFlags& f, const CLI::App& sub);

// Registers `run` and its flags on `app`; the function returned, called after `app` parsed,
// gives the validated spec (with its search plan when --search-slo was given).
std::function<run::Spec()> add_run_flags(CLI::App& app);

// The spec `servebench run ARGS` describes (ARGS after "run"): the latency and throughput kinds
// build their runs with it. A parse error is a core::Error (kUsage) naming `servebench run`.
run::Spec run_spec_from_args(const std::vector<std::string>& args);

}  // namespace servebench::cli
