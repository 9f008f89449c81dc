// `servebench run`: its flags registered (defaults are vLLM's), checked into a run::Spec by
// run_flag_checks.cpp, and carried out by the run part (run::execute).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "cli/run_flags.h"
#include "cli/search_flags.h"
#include "cli/values.h"
#include "core/error.h"

namespace servebench::cli {
namespace {

// "--num-prompts" also answers to "--num_prompts", as vLLM's FlexibleArgumentParser does.
std::string names(const std::string& dashed) {
  std::string underscored = dashed;
  std::replace(underscored.begin() + 2, underscored.end(), '-', '_');
  return underscored == dashed ? dashed : dashed + "," + underscored;
}

// Help lists each flag once, under its dashed name.
class RunFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool positional) const override {
    if (positional || opt->get_lnames().empty())
      return CLI::Formatter::make_option_name(opt, positional);
    return "--" + opt->get_lnames().front();
  }
};

}  // namespace

std::function<run::Spec()> add_run_flags(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "run",
      "Benchmark an OpenAI-compatible server, as `vllm bench serve` does (same flags, console "
      "block and result JSON). Without --base-url/--host/--port it starts the built-in "
      "simulator in-process.");
  sub->allow_extras();
  sub->formatter(std::make_shared<RunFormatter>());
  auto f = std::make_shared<RawFlags>();
  auto opt = [&](const std::string& name, std::string& target, const std::string& help,
                 const std::string& group) {
    // expected(0, 1) without a captured default: a missing value arrives as "" and is
    // reported by check_values_present() as one line, instead of CLI11's own message.
    std::string text = target.empty() ? help : help + " [default: " + target + "]";
    // TakeLast: a flag given twice keeps its last value, as argparse does.
    return sub->add_option(names(name), target, text)
        ->expected(0, 1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
        ->group(group);
  };
  auto flag = [&](const std::string& name, bool& target, const std::string& help,
                  const std::string& group) {
    return sub->add_flag(names(name), target, help)->group(group);
  };
  auto list = [&](const std::string& name, std::vector<std::string>& target,
                  const std::string& help, const std::string& group) {
    return sub->add_option(names(name), target, help)
        ->expected(0, CLI::detail::expected_max_vector_size)
        ->allow_extra_args()
        ->group(group);
  };
  const std::string target = "Target (vLLM)", data = "Dataset (vLLM)", traffic = "Traffic (vLLM)",
                    body = "Request body (vLLM)", out = "Results (vLLM)", extra = "servebench",
                    simg = "Embedded simulator (servebench)";
  opt("--backend", f->backend, "openai (completions; alias vllm) or openai-chat", target);
  opt("--endpoint-type", f->endpoint_type, "older vLLM name of --backend", target);
  opt("--label", f->label, "prefix of the result file name (default: the backend)", target);
  // Repeated, the values are joined with '\n' and read as a list (target_flags.h).
  opt("--base-url", f->base_url,
      "server base URL, instead of --host/--port; several (a comma list or the flag repeated) "
      "are benchmarked at once",
      target)
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  opt("--host", f->host, "server host", target);
  opt("--port", f->port, "server port", target);
  opt("--endpoint", f->endpoint, "API path (openai-chat defaults to /v1/chat/completions)", target);
  list("--header", f->header, "KEY=VALUE headers sent with every request", target);
  opt("--model", f->model,
      "model name (default: the server's first model; embedded: servebench-sim); with several "
      "targets a comma list names each one's",
      target)
      ->multi_option_policy(CLI::MultiOptionPolicy::Join);
  opt("--served-model-name", f->served_model_name,
      "the \"model\" sent in requests (default: --model)", target);
  opt("--tokenizer", f->tokenizer,
      "tokenizer.json / .model file, model directory, Hugging Face model id in the local cache, "
      "or builtin (default: --model when found locally, else builtin)",
      target);
  opt("--tokenizer-mode", f->tokenizer_mode, "accepted for compatibility; ignored", target);
  flag("--trust-remote-code", f->trust_remote_code, "accepted for compatibility; ignored", target);
  flag("--insecure", f->insecure, "skip TLS certificate verification", target);
  opt("--ca-cert", f->ca_cert,
      "PEM file of the CAs to verify the server with (default: $CURL_CA_BUNDLE, "
      "$SSL_CERT_FILE, else the system's)",
      target);
  opt("--ready-check-timeout-sec", f->ready_check_timeout_sec,
      "retry the initial test request this long (0: one try)", target);

  opt("--dataset-name", f->dataset_name,
      "random, sharegpt, custom, sonnet, prefix_repetition, generated-shared-prefix, mooncake, "
      "timed_trace or azure_trace (docs/datasets.md)",
      data);
  opt("--dataset-path", f->dataset_path,
      "the dataset's file (sharegpt, custom, traces; sonnet: default built-in verses)", data);
  opt("--num-prompts", f->num_prompts, "number of requests", data);
  opt("--seed", f->seed, "seed of the dataset and the arrival times", data);
  opt("--input-len", f->input_len, "general input length (sets --random-input-len)", data);
  opt("--output-len", f->output_len, "general output length (sets --random-output-len)", data);
  opt("--random-input-len", f->random_input_len, "input tokens per request", data);
  opt("--random-output-len", f->random_output_len, "output tokens per request", data);
  opt("--random-range-ratio", f->random_range_ratio,
      "lengths uniform in [len*(1-r), len*(1+r)], r in [0, 1)", data);
  opt("--random-prefix-len", f->random_prefix_len,
      "tokens of a random prefix shared by all prompts", data);
  opt("--random-token-rule", f->random_token_rule,
      "vllm (decode, re-encode, adjust) or round-trip (whole-word tokens, exact without "
      "re-encoding; docs/run.md)",
      data);
  flag("--disable-shuffle", f->disable_shuffle, "keep file rows in file order (no seeded shuffle)",
       data);
  flag("--no-oversample", f->no_oversample,
       "send only the usable rows when a file has fewer than --num-prompts", data);
  flag("--skip-chat-template", f->skip_chat_template,
       "accepted for compatibility: prompts are always sent without a chat template", data);
  flag("--multi-turn", f->multi_turn,
       "sharegpt: replay whole conversations, each turn sent with its history when the previous "
       "answer ends; --num-prompts counts conversations",
       extra);
  opt("--max-turns", f->max_turns, "--multi-turn: at most this many user turns (0: all)", extra);
  opt("--max-active-conversations", f->max_active_conversations,
      "--multi-turn: at most this many conversations under way at once", extra);
  opt("--sharegpt-output-len", f->sharegpt_output_len,
      "sharegpt: output tokens per request (default: the reply's tokens)", data);
  opt("--custom-output-len", f->custom_output_len,
      "custom: output tokens per request; -1 = each row's output_tokens", data);
  flag("--custom-skip-chat-template", f->custom_skip_chat_template,
       "accepted for compatibility (older vLLM name of --skip-chat-template)", data);
  opt("--sonnet-input-len", f->sonnet_input_len, "sonnet: at most this many prompt tokens", data);
  opt("--sonnet-output-len", f->sonnet_output_len, "sonnet: output tokens per request", data);
  opt("--sonnet-prefix-len", f->sonnet_prefix_len, "sonnet: tokens of the shared prefix", data);
  opt("--prefix-repetition-prefix-len", f->prefix_repetition_prefix_len,
      "prefix_repetition: tokens of each shared prefix", data);
  opt("--prefix-repetition-suffix-len", f->prefix_repetition_suffix_len,
      "prefix_repetition: tokens after the prefix", data);
  opt("--prefix-repetition-num-prefixes", f->prefix_repetition_num_prefixes,
      "prefix_repetition: prefixes (num-prompts / this prompts each)", data);
  opt("--prefix-repetition-output-len", f->prefix_repetition_output_len,
      "prefix_repetition: output tokens per request", data);
  opt("--gsp-num-groups", f->gsp_num_groups, "generated-shared-prefix: groups (system prompts)",
      data);
  opt("--gsp-prompts-per-group", f->gsp_prompts_per_group,
      "generated-shared-prefix: questions per group", data);
  opt("--gsp-system-prompt-len", f->gsp_system_prompt_len,
      "generated-shared-prefix: system prompt tokens", data);
  opt("--gsp-question-len", f->gsp_question_len, "generated-shared-prefix: question tokens", data);
  opt("--gsp-output-len", f->gsp_output_len, "generated-shared-prefix: output tokens", data);
  opt("--gsp-range-ratio", f->gsp_range_ratio,
      "generated-shared-prefix: lengths uniform in [len*ratio, len]", data);
  flag("--gsp-ordered", f->gsp_ordered, "generated-shared-prefix: send groups in order", data);
  opt("--timed-trace-chunk-hash-size", f->timed_trace_chunk_hash_size,
      "timed_trace: tokens per hash id", data);
  opt("--timed-trace-sec-multiplier", f->timed_trace_sec_multiplier,
      "timed_trace: seconds per timestamp unit (0.001 for ms)", data);
  opt("--timed-trace-label-timestamp", f->timed_trace_label_timestamp,
      "timed_trace: timestamp field", data);
  opt("--timed-trace-label-input-length", f->timed_trace_label_input_length,
      "timed_trace: input length field", data);
  opt("--timed-trace-label-output-length", f->timed_trace_label_output_length,
      "timed_trace: output length field", data);
  opt("--timed-trace-label-hash-ids", f->timed_trace_label_hash_ids, "timed_trace: hash ids field",
      data);
  opt("--trace-block-tokens", f->trace_block_tokens,
      "mooncake: tokens per hash id (Mooncake's block)", data);
  flag("--self-timed", f->self_timed,
       "trace datasets: send each request at its trace timestamp (the default)", traffic);
  flag("--no-self-timed", f->no_self_timed,
       "trace datasets: ignore the timestamps; send at --request-rate like other datasets",
       traffic);
  opt("--trace-time-scale", f->trace_time_scale,
      "trace datasets: multiply the trace's times by this (2 = half speed)", traffic);

  opt("--request-rate", f->request_rate,
      "requests per second (inf: all at once); a list (1,4,16,inf) runs one benchmark each",
      traffic);
  opt("--burstiness", f->burstiness, "gamma shape of the gaps: 1 Poisson, <1 burstier, >1 steadier",
      traffic);
  opt("--ramp-up-strategy", f->ramp_up.strategy,
      "linear or exponential: the rate rises from --ramp-up-start-rps at the first request to "
      "--ramp-up-end-rps at the last, instead of --request-rate",
      traffic);
  opt("--ramp-up-start-rps", f->ramp_up.start_rps,
      "with --ramp-up-strategy: the first request's rate (an integer >= 1)", traffic);
  opt("--ramp-up-end-rps", f->ramp_up.end_rps,
      "with --ramp-up-strategy: the last request's rate (an integer >= the start)", traffic);
  opt("--max-concurrency", f->max_concurrency,
      "at most this many requests in flight; a list (1,2,4,8) runs one benchmark each", traffic);
  opt("--num-warmups", f->num_warmups, "warmup requests before the run (not measured)", traffic);
  opt("--num-runs", f->num_runs,
      "run each point this many times (same prompts; arrivals reseeded per run unless --seed is "
      "given; warmups once) and report each figure's mean, sd and 95% confidence interval",
      extra);
  opt("--probe-request-rate", f->probe_request_rate,
      "> 0: also send one-token probes, one at a time, this many per second beside the run "
      "(past --max-concurrency), and report their latency apart",
      traffic);

  flag("--ignore-eos", f->ignore_eos, "send ignore_eos (always on for the random dataset)", body);
  opt("--extra-body", f->extra_body, "JSON object merged into every request body", body);
  opt("--logprobs", f->logprobs,
      "log-probabilities per output token (completions backends; default: none)", body);
  opt("--request-id-prefix", f->request_id_prefix, "x-request-id prefix (default bench-<8 hex>-)",
      body);
  opt("--temperature", f->temperature, "sampling temperature", body);
  opt("--top-p", f->top_p, "top-p", body);
  opt("--top-k", f->top_k, "top-k", body);
  opt("--min-p", f->min_p, "min-p", body);
  opt("--frequency-penalty", f->frequency_penalty, "frequency penalty", body);
  opt("--presence-penalty", f->presence_penalty, "presence penalty", body);
  opt("--repetition-penalty", f->repetition_penalty, "repetition penalty", body);

  opt("--percentile-metrics", f->percentile_metrics,
      "metrics with percentiles (default ttft,tpot,itl)", out);
  opt("--metric-percentiles", f->metric_percentiles, "comma-separated percentiles", out);
  list("--goodput", f->goodput, "SLOs KEY:VALUE in ms (ttft, tpot, e2el)", out);
  flag("--save-result", f->save_result, "save the result JSON", out);
  flag("--save-detailed", f->save_detailed, "add per-request arrays to the result JSON", out);
  flag("--append-result", f->append_result, "append the result JSON to the file", out);
  list("--metadata", f->metadata, "KEY=VALUE pairs stored in the result JSON", out);
  opt("--result-dir", f->result_dir, "directory of the result files", out);
  opt("--result-filename", f->result_filename,
      "result file name (default {label}-{rate}qps-...json)", out);
  flag("--disable-tqdm", f->disable_tqdm, "no progress bar", out);
  flag("--live", f->live,
       "in a terminal, a block redrawn every second instead of the progress bar: rate, in "
       "flight, tokens/s, TTFT/ITL of the last 10 s, errors, server queue and KV cache",
       out);

  opt("--records", f->records,
      "per-request JSONL, written as requests finish (default: beside the result)", extra);
  opt("--io-threads", f->io_threads, "client I/O threads", extra);
  opt("--http-engine", f->http_engine,
      "auto (http1 for http:// URLs, curl otherwise), http1 (servebench's own, http:// only) or "
      "curl (libcurl: TLS, HTTP/2)",
      extra);
  opt("--arrival-clock", f->arrival_clock,
      "chunk times: kernel (when the bytes reached this machine, SO_TIMESTAMPNS; http1 only) or "
      "read (when the client read them, as vLLM's client does)",
      extra);
  opt("--request-timeout-sec", f->request_timeout_sec,
      "a request not complete after this long fails with a timeout (vLLM: 6 h)", extra);
  opt("--drain-timeout-sec", f->drain_timeout_sec,
      "after Ctrl-C, wait this long for requests in flight", extra);
  opt("--server-metrics", f->server_metrics,
      "scrape the server's Prometheus metrics during each run: auto (<base-url>/metrics when "
      "it answers), off, or URLs (comma-separated)",
      extra);
  opt("--server-metrics-interval", f->server_metrics_interval, "seconds between scrapes", extra);

  const std::string shards = "Shards (servebench; docs/run.md)";
  opt("--shard", f->shard,
      "K/N: send only the requests of the plan shard K of N owns (caps split among the shards); "
      "auto or auto/N: K (and N) from JOB_COMPLETION_INDEX + SERVEBENCH_SHARDS, "
      "SLURM_ARRAY_TASK_ID/_COUNT or SLURM_PROCID/SLURM_NTASKS",
      shards);
  opt("--start-at", f->start_at,
      "with --shard: wait until this wall-clock instant (unix seconds or ISO 8601) to start",
      shards);

  const std::string load = "Load shape (GuideLLM)";
  opt("--profile", f->load.profile,
      "GuideLLM's profile: synchronous, throughput, concurrent, constant, poisson or sweep", load);
  opt("--rate", f->load.rate,
      "with --profile: concurrent = streams, constant/poisson = req/s (a list runs one each), "
      "throughput = max concurrency, sweep = number of benchmarks [default: 10]",
      load);
  opt("--duration", f->load.duration,
      "seconds: send until then, cancel what is in flight; --num-prompts becomes a cap", load);
  opt("--warmup", f->load.warmup,
      "leave out of the metrics: a fraction (0-1) of the run, or N requests and N seconds", load);
  opt("--cooldown", f->load.cooldown,
      "leave out of the metrics: the last fraction (0-1), or last N requests and N seconds", load);
  opt("--warmup-number", f->load.warmup_number, "leave out the first N requests to complete", load);
  opt("--warmup-duration", f->load.warmup_duration,
      "leave out the requests due in the first S seconds", load);
  opt("--cooldown-number", f->load.cooldown_number, "leave out the last N requests to complete",
      load);
  opt("--cooldown-duration", f->load.cooldown_duration,
      "leave out the requests ending in the last S seconds", load);
  opt("--max-errors", f->load.max_errors, "stop sending after N errored requests", load);
  opt("--max-error-rate", f->load.max_error_rate,
      "stop sending when this share (0-1) of the last 30 requests errored", load);

  const std::string several = "Several targets, load stages (servebench)";
  opt("--sim-instances", f->sim_instances,
      "start N embedded simulators and benchmark them at once, one target each", several);
  opt("--stages", f->stages.stages,
      "inference-perf's load stages RATE:DURATION,... (e.g. 1:60,5:60), or YAML/JSON inline or "
      "in a file; one result per stage",
      several);
  opt("--stage-arrival", f->stages.arrival,
      "with --stages: constant or poisson (inference-perf's load.type) [default: constant]",
      several);
  opt("--stage-interval", f->stages.interval,
      "with --stages: seconds between stages (inference-perf's load.interval) [default: 1]",
      several);

  opt("--sim-mode", f->sim_mode, "fixed or engine", simg);
  opt("--sim-ttft-ms", f->sim_ttft_ms, "fixed mode: time to first token", simg);
  opt("--sim-itl-ms", f->sim_itl_ms, "fixed mode: time between tokens", simg);
  opt("--sim-ttft-jitter-ms", f->sim_ttft_jitter_ms, "fixed mode: standard deviation of TTFT",
      simg);
  opt("--sim-itl-jitter-ms", f->sim_itl_jitter_ms, "fixed mode: standard deviation of ITL", simg);
  opt("--sim-engine-profile", f->sim_engine_profile, "engine mode: profile YAML", simg);
  opt("--sim-deployment", f->sim_deployment,
      "start a simulated deployment file (docs/deployments.md) embedded; one target per frontend",
      simg);
  opt("--sim-threads", f->sim_threads, "simulator I/O threads", simg);
  list("--sim-fault", f->sim_fault,
       "fault rules KIND[:PROB[:AFTER_TOKENS[:STALL_S]]] (as servebench sim --fault)", simg);
  opt("--sim-trace-out", f->sim_trace_out,
      "server-side times per request (JSONL, as servebench sim --trace-out)", simg);

  auto search = std::make_shared<SearchFlags>();  // --search-slo (search_flags.h)
  add_search_flags(*sub, search);
  return [f, sub, search]() -> run::Spec {
    run::Spec spec = spec_from_flags(*f, *sub);
    if (search_requested(*sub, *search)) spec.search = validate_search(*search, spec);
    if (spec.search && spec.num_runs > 1)
      usage("--num-runs", "cannot be combined with --search-slo (each probe is one run)");
    return spec;
  };
}

Action add_run_command(CLI::App& app) {
  std::function<run::Spec()> make_spec = add_run_flags(app);
  return [make_spec]() -> int { return run::execute(make_spec()); };
}

run::Spec run_spec_from_args(const std::vector<std::string>& args) {
  CLI::App app;
  app.require_subcommand(1);
  std::function<run::Spec()> make_spec = add_run_flags(app);
  std::vector<std::string> reversed = {args.rbegin(), args.rend()};  // CLI11 takes them reversed
  reversed.push_back("run");
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    throw core::Error(core::ErrorKind::kUsage, "servebench run", e.what());
  }
  return make_spec();
}

}  // namespace servebench::cli
