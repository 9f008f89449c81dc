// `servebench run`: vLLM's `vllm bench serve` flags (vllm/benchmarks/serve.py add_cli_args and
// datasets add_dataset_parser), same names and defaults, plus servebench's extras. This file
// turns flags into a validated RunConfig; run_execute.cpp runs it.
//
// Numbers are read as text and converted here, so that every bad value gives one line naming
// the flag and exit code 2 (core::Error kUsage), the same as an unknown flag.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_config.h"
#include "cli/run_profiles.h"
#include "cli/run_ramp_up.h"
#include "cli/run_search.h"
#include "cli/run_stages.h"
#include "cli/run_support.h"
#include "cli/run_targets.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "sim/model/timing_model.h"

namespace servebench::cli {
namespace {

using run::parse_double;
using run::parse_int;

using run::usage;

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
  bool disable_tqdm = false, save_result = false, save_detailed = false, append_result = false,
       ignore_eos = false, insecure = false, trust_remote_code = false;
  std::string num_warmups = "0", result_dir, result_filename;
  std::string percentile_metrics, metric_percentiles = "99", request_id_prefix;
  std::string logprobs, probe_request_rate = "0.0";
  std::string top_p, top_k, min_p, temperature, frequency_penalty, presence_penalty,
      repetition_penalty;
  std::string ready_check_timeout_sec = "0", extra_body;
  // servebench
  std::string records, io_threads = "1", drain_timeout_sec = "10", http_engine = "auto";
  std::string request_timeout_sec = "21600";  // vLLM's aiohttp total timeout: 6 h
  std::string arrival_clock = "kernel";
  std::string server_metrics = "auto", server_metrics_interval = "0.333";
  std::string sim_ttft_ms = "50", sim_itl_ms = "10", sim_ttft_jitter_ms = "0",
              sim_itl_jitter_ms = "0", sim_mode = "fixed", sim_engine_profile, sim_threads = "1",
              sim_trace_out;
  std::vector<std::string> sim_fault;
  run::LoadFlags load;              // GuideLLM's load shapes (run_profiles.h)
  std::string sim_instances = "1";  // several embedded simulators, one target each (run_targets.h)
  run::StageFlags stages;           // inference-perf's load stages (run_stages.h)
  run::RampUpFlags ramp_up;         // vLLM's ramp-up (run_ramp_up.h)
};

// "--num-prompts" also answers to "--num_prompts", as vLLM's FlexibleArgumentParser does.
std::string names(const std::string& dashed) {
  std::string underscored = dashed;
  std::replace(underscored.begin() + 2, underscored.end(), '-', '_');
  return underscored == dashed ? dashed : dashed + "," + underscored;
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; });
}

// A credential header's value, and its token without the scheme ("Bearer abc" → "abc"), so
// that a server echoing either cannot put it in a result or an error.
void register_credential(const std::string& value) {
  core::register_secret(value);
  if (size_t space = value.find(' '); space != std::string::npos)
    core::register_secret(value.substr(space + 1));
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

// vLLM flags servebench does not implement yet: named as such instead of "unknown".
// (vLLM's --profile, the torch profiler switch, is GuideLLM's --profile here: run_profiles.h.)
const std::set<std::string> kVllmOnlyFlags = {"--lora-modules",
                                              "--lora-assignment",
                                              "--use-beam-search",
                                              "--plot-timeline",
                                              "--timeline-itl-thresholds",
                                              "--plot-dataset-stats",
                                              "--skip-tokenizer-init",
                                              "--chat-template-kwargs",
                                              "--no-stream",
                                              "--random-batch-size",
                                              "--hf-subset",
                                              "--hf-split",
                                              "--hf-name",
                                              "--hf-output-len",
                                              "--spec-bench-output-len",
                                              "--spec-bench-category"};

void reject_extras(const std::vector<std::string>& extras) {
  if (extras.empty()) return;
  const std::string& first = extras.front();
  if (first.rfind("--", 0) == 0) {
    std::string name = first.substr(0, first.find('='));
    std::replace(name.begin() + 2, name.end(), '_', '-');
    if (kVllmOnlyFlags.count(name) || name.rfind("--random-mm", 0) == 0) {
      usage(name, "this vLLM flag is not supported by servebench yet");
    }
    usage(name, "unknown flag (see servebench run --help)");
  }
  if (first.size() > 1 && first[0] == '-' && !std::isdigit(static_cast<unsigned char>(first[1]))) {
    usage(first, "unknown flag (see servebench run --help)");
  }
  usage("run", "unexpected argument '" + first + "'");
}

double positive_or_inf(const std::string& flag, const std::string& text) {
  double v = parse_double(flag, text);
  if (!(v > 0)) usage(flag, "must be a positive number or inf, got " + text);
  return v;
}

double non_negative(const std::string& flag, const std::string& text) {
  double v = parse_double(flag, text);
  if (v < 0 || std::isinf(v)) usage(flag, "must be a non-negative number, got " + text);
  return v;
}

// The sampling flags as a JSON object, with --extra-body merged over them (vLLM's
// {**sampling_params, **extra_body}).
std::string body_extras(const RawFlags& f, bool* temperature_given) {
  nlohmann::json body = nlohmann::json::object();
  auto number = [&](const char* flag, const std::string& text, const char* key) {
    if (!text.empty()) body[key] = parse_double(flag, text);
  };
  number("--top-p", f.top_p, "top_p");
  if (!f.top_k.empty()) body["top_k"] = parse_int("--top-k", f.top_k, INT32_MIN, INT32_MAX);
  number("--min-p", f.min_p, "min_p");
  number("--temperature", f.temperature, "temperature");
  number("--frequency-penalty", f.frequency_penalty, "frequency_penalty");
  number("--presence-penalty", f.presence_penalty, "presence_penalty");
  number("--repetition-penalty", f.repetition_penalty, "repetition_penalty");
  *temperature_given = !f.temperature.empty();
  // vLLM's completions payload carries "logprobs": null unless --logprobs N.
  if (!f.logprobs.empty()) body["logprobs"] = parse_int("--logprobs", f.logprobs, 0, INT32_MAX);
  if (!f.extra_body.empty()) {
    nlohmann::json extra = nlohmann::json::parse(f.extra_body, nullptr, false);
    if (extra.is_discarded()) usage("--extra-body", "not valid JSON: " + f.extra_body);
    if (!extra.is_object()) usage("--extra-body", "must be a JSON object ({...})");
    for (auto it = extra.begin(); it != extra.end(); ++it) body[it.key()] = it.value();
    if (extra.contains("temperature")) *temperature_given = true;
  }
  return body.empty() ? std::string() : body.dump();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether a flag was given on the command line (defaults do not count).
using Given = std::function<bool(const char*)>;

void check_target(const RawFlags& f, const Given& given, run::RunConfig& c) {
  // Target.
  c.backend = f.endpoint_type.empty() ? f.backend : f.endpoint_type;
  static const std::set<std::string> kVllmBackends = {"openai-audio",
                                                      "openai-embeddings",
                                                      "openai-embeddings-chat",
                                                      "openai-embeddings-clip",
                                                      "openai-embeddings-vlm2vec",
                                                      "infinity-embeddings",
                                                      "infinity-embeddings-clip",
                                                      "vllm-pooling",
                                                      "vllm-rerank"};
  if (c.backend == "openai-chat") {
    c.api = client::Api::kChatCompletions;
    // vLLM puts logprobs in its completions payload only; a chat body would silently lack it.
    if (given("--logprobs"))
      usage("--logprobs", "applies to the completions backends (openai, vllm)");
  } else if (c.backend != "openai" && c.backend != "vllm") {
    if (kVllmBackends.count(c.backend)) {
      usage("--backend",
            "'" + c.backend +
                "' is not supported by servebench yet; use openai, vllm or openai-chat");
    }
    usage("--backend", "unknown backend '" + c.backend + "'; use openai, vllm or openai-chat");
  }
  c.label = f.label;
  c.endpoint = f.endpoint;
  if (!given("--endpoint") && c.api == client::Api::kChatCompletions) {
    c.endpoint = "/v1/chat/completions";  // vLLM makes you say it; the default cannot work
  }
  if (c.api == client::Api::kChatCompletions && !ends_with(c.endpoint, "chat/completions")) {
    usage("--endpoint",
          "the openai-chat backend needs an endpoint ending in 'chat/completions', got '" +
              c.endpoint + "'");
  }
  if (c.api == client::Api::kCompletions) {
    if (ends_with(c.endpoint, "chat/completions")) {
      usage("--endpoint", "'" + c.endpoint + "' is a chat endpoint; add --backend openai-chat");
    }
    if (!ends_with(c.endpoint, "completions")) {
      usage("--endpoint", "the " + c.backend +
                              " backend needs an endpoint ending in 'completions', got '" +
                              c.endpoint + "'");
    }
  }
  if (!c.endpoint.empty() && c.endpoint[0] != '/') usage("--endpoint", "must start with '/'");
  c.embedded = !given("--base-url") && !given("--host") && !given("--port");
  if (given("--base-url")) {
    // Several URLs (a comma list, or the flag repeated) are several targets (run_targets.h).
    c.target_urls = run::parse_base_urls(f.base_url);
    c.base_url = c.target_urls.front();
  } else if (!c.embedded) {
    int port = static_cast<int>(parse_int("--port", f.port, 1, 65535));
    bool v6 = f.host.find(':') != std::string::npos;
    c.base_url = "http://" + (v6 ? "[" + f.host + "]" : f.host) + ":" + std::to_string(port);
  }
  for (const auto& [k, v] : run::parse_pairs("--header", f.header, '=')) {
    if (!run::is_header_name(k)) {
      usage("--header", "'" + k + "' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
    }
    if (core::is_secret_header(k)) register_credential(v);
    c.headers.push_back(k + ": " + v);
  }
  if (const char* key = std::getenv("OPENAI_API_KEY")) {
    // Never echoed: the message names the variable only.
    if (has_control_character(key)) {
      usage("OPENAI_API_KEY", "contains a line break or another control character");
    }
    c.api_key = key;
    core::register_secret(c.api_key);
  }
  c.insecure = f.insecure;
  c.model = f.model;
  c.served_model_name = f.served_model_name;
  // Loaded by execute_run (docs/tokenizers.md says how a name resolves).
  c.tokenizer = f.tokenizer;
}

int32_t length_flag(const char* flag, const std::string& text, int64_t low) {
  return static_cast<int32_t>(parse_int(flag, text, low, 10'000'000));
}

// The `random` dataset (--input-len/--output-len stand for its lengths, as in vLLM).
void check_random(const RawFlags& f, const Given& given, dataset::RandomOptions& r) {
  r.input_len = given("--input-len") ? length_flag("--input-len", f.input_len, 0)
                                     : length_flag("--random-input-len", f.random_input_len, 0);
  r.output_len = given("--output-len") ? length_flag("--output-len", f.output_len, 1)
                                       : length_flag("--random-output-len", f.random_output_len, 1);
  r.range_ratio = parse_double("--random-range-ratio", f.random_range_ratio);
  if (!(r.range_ratio >= 0 && r.range_ratio < 1)) {
    usage("--random-range-ratio", "must be in [0, 1), got " + f.random_range_ratio);
  }
  r.prefix_len = length_flag("--random-prefix-len", f.random_prefix_len, 0);
  if (!dataset::parse_token_rule(f.random_token_rule, &r.token_rule)) {
    usage("--random-token-rule", "must be vllm or round-trip, got '" + f.random_token_rule + "'");
  }
  if (r.prefix_len + std::floor(r.input_len * (1 - r.range_ratio)) < 1) {
    usage("--random-input-len", "too small: the shortest prompt would have 0 tokens");
  }
}

// Every other dataset's flags (vLLM's names and defaults; SGLang's --gsp-*; servebench's
// --trace-*). Flags of a dataset not chosen are parsed too, so a bad value is never ignored.
void check_other_datasets(const RawFlags& f, const Given& given, run::RunConfig& c) {
  dataset::DatasetOptions& d = c.dataset;
  const dataset::FileSampling sampling{f.dataset_path, c.seed, !f.disable_shuffle,
                                       !f.no_oversample};
  d.sharegpt.file = d.custom.file = sampling;
  if (given("--sharegpt-output-len")) {
    d.sharegpt.output_len = length_flag("--sharegpt-output-len", f.sharegpt_output_len, 1);
  }
  d.sharegpt.multi_turn = f.multi_turn;
  d.sharegpt.max_turns = length_flag("--max-turns", f.max_turns, 0);
  if (given("--max-active-conversations")) {
    c.max_active_conversations = static_cast<int>(
        parse_int("--max-active-conversations", f.max_active_conversations, 1, 10'000'000));
  }
  if (f.multi_turn && f.dataset_name != "sharegpt")
    usage("--multi-turn", "replays sharegpt conversations; use --dataset-name sharegpt");
  for (const char* flag : {"--max-turns", "--max-active-conversations"}) {
    if (!f.multi_turn && given(flag)) usage(flag, "applies only with --multi-turn");
  }
  d.custom.output_len =
      static_cast<int32_t>(parse_int("--custom-output-len", f.custom_output_len, -1, 10'000'000));
  if (d.custom.output_len == 0) usage("--custom-output-len", "must be >= 1, or -1 for the file's");

  d.sonnet.path = f.dataset_path;
  d.sonnet.seed = c.seed;
  d.sonnet.input_len = length_flag("--sonnet-input-len", f.sonnet_input_len, 1);
  d.sonnet.output_len = length_flag("--sonnet-output-len", f.sonnet_output_len, 1);
  d.sonnet.prefix_len = length_flag("--sonnet-prefix-len", f.sonnet_prefix_len, 0);

  auto& pr = d.prefix_repetition;
  pr.prefix_len = length_flag("--prefix-repetition-prefix-len", f.prefix_repetition_prefix_len, 0);
  pr.suffix_len = length_flag("--prefix-repetition-suffix-len", f.prefix_repetition_suffix_len, 0);
  pr.num_prefixes =
      length_flag("--prefix-repetition-num-prefixes", f.prefix_repetition_num_prefixes, 1);
  pr.output_len = length_flag("--prefix-repetition-output-len", f.prefix_repetition_output_len, 1);
  // vLLM's --output-len sets sharegpt's, custom's and prefix_repetition's output lengths (and
  // random's, check_random); --input-len only random's. Sonnet keeps its own flags.
  if (given("--output-len")) {
    int32_t output_len = length_flag("--output-len", f.output_len, 1);
    d.sharegpt.output_len = d.custom.output_len = pr.output_len = output_len;
  }
  pr.seed = c.seed;
  pr.shuffle = !f.disable_shuffle;

  auto& gsp = d.shared_prefix;
  gsp.num_groups = length_flag("--gsp-num-groups", f.gsp_num_groups, 1);
  gsp.prompts_per_group = length_flag("--gsp-prompts-per-group", f.gsp_prompts_per_group, 1);
  gsp.system_prompt_len = length_flag("--gsp-system-prompt-len", f.gsp_system_prompt_len, 0);
  gsp.question_len = length_flag("--gsp-question-len", f.gsp_question_len, 0);
  gsp.output_len = length_flag("--gsp-output-len", f.gsp_output_len, 1);
  gsp.range_ratio = parse_double("--gsp-range-ratio", f.gsp_range_ratio);
  if (!(gsp.range_ratio > 0 && gsp.range_ratio <= 1)) {
    usage("--gsp-range-ratio", "must be in (0, 1], got " + f.gsp_range_ratio);
  }
  gsp.seed = c.seed;
  gsp.shuffle = !f.disable_shuffle && !f.gsp_ordered;

  auto& t = d.trace;
  t.path = f.dataset_path;
  t.seed = c.seed;
  if (d.name == "azure_trace") t.format = dataset::TraceOptions::Format::kAzureCsv;
  if (d.name == "timed_trace") {
    // vLLM's TimedTrace and its defaults: seconds, 16-token hash blocks, configurable labels.
    t.block_tokens = length_flag("--timed-trace-chunk-hash-size", f.timed_trace_chunk_hash_size, 1);
    t.seconds_per_unit = parse_double("--timed-trace-sec-multiplier", f.timed_trace_sec_multiplier);
    if (!(t.seconds_per_unit > 0) || std::isinf(t.seconds_per_unit)) {
      usage("--timed-trace-sec-multiplier", "must be a positive number");
    }
    t.timestamp_field = f.timed_trace_label_timestamp;
    t.input_field = f.timed_trace_label_input_length;
    t.output_field = f.timed_trace_label_output_length;
    t.hash_ids_field = f.timed_trace_label_hash_ids;
  } else {
    t.block_tokens = length_flag("--trace-block-tokens", f.trace_block_tokens, 1);
  }
  c.trace_time_scale = parse_double("--trace-time-scale", f.trace_time_scale);
  if (!(c.trace_time_scale > 0) || std::isinf(c.trace_time_scale)) {
    usage("--trace-time-scale", "must be a positive number, got " + f.trace_time_scale);
  }
}

void check_dataset(const RawFlags& f, const Given& given, run::RunConfig& c) {
  // Dataset.
  static const std::set<std::string> kVllmDatasets = {
      "burstgpt",   "random-mm",    "random-rerank", "hf",         "spec_bench",
      "txt-slices", "custom_audio", "custom_image",  "speed_bench"};
  const std::string& name = f.dataset_name;
  const auto& known = dataset::dataset_names();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    usage("--dataset-name", "'" + name + "' is " +
                                (kVllmDatasets.count(name) ? "a vLLM dataset not supported by "
                                                             "servebench yet"
                                                           : "not a dataset") +
                                "; use one of " + list);
  }
  c.dataset.name = name;
  static const std::set<std::string> kNeedsPath = {"sharegpt", "custom", "mooncake", "timed_trace",
                                                   "azure_trace"};
  static const std::set<std::string> kTakesPath = {"sharegpt", "custom",      "sonnet",
                                                   "mooncake", "timed_trace", "azure_trace"};
  if (kNeedsPath.count(name) && !given("--dataset-path")) {
    usage("--dataset-path", "the " + name + " dataset needs --dataset-path (a file)");
  }
  if (given("--dataset-path") && !kTakesPath.count(name)) {
    usage("--dataset-path", "the " + name + " dataset takes no --dataset-path (got '" +
                                f.dataset_path + "'); did you mean another --dataset-name?");
  }
  c.num_prompts = static_cast<int>(parse_int("--num-prompts", f.num_prompts, 1, 100'000'000));
  c.seed = static_cast<uint64_t>(parse_int("--seed", f.seed, 0, INT64_MAX));
  c.dataset.random.seed = c.seed;
  check_random(f, given, c.dataset.random);
  check_other_datasets(f, given, c);
  if (name == "generated-shared-prefix") {
    // SGLang sends groups x prompts per group, whatever --num-prompts says; here a different
    // --num-prompts is an error rather than silently ignored.
    const int total =
        c.dataset.shared_prefix.num_groups * c.dataset.shared_prefix.prompts_per_group;
    if (given("--num-prompts") && c.num_prompts != total) {
      usage("--num-prompts",
            "generated-shared-prefix sends --gsp-num-groups x "
            "--gsp-prompts-per-group = " +
                std::to_string(total) + " prompts; drop --num-prompts or make it " +
                std::to_string(total));
    }
    if (total > 100'000'000) usage("--gsp-num-groups", "too many prompts");
    c.num_prompts = total;
  }

  // Traffic. A trace brings its own send times (vLLM's self-timed replay, the default for its
  // timed_trace; here for every trace dataset): a rate, burstiness or ramp-up would contradict
  // them. --no-self-timed sends the trace's requests on the usual schedule instead.
  const bool trace = dataset::is_trace_dataset(name);
  for (const char* flag : {"--self-timed", "--no-self-timed"}) {
    if (!trace && given(flag)) {
      usage(flag, "applies only to trace datasets (mooncake, timed_trace, azure_trace)");
    }
  }
  if (f.self_timed && f.no_self_timed) usage("--no-self-timed", "contradicts --self-timed");
  c.self_timed = trace && !f.no_self_timed;
  for (const char* flag : {"--request-rate", "--burstiness", "--ramp-up-strategy"}) {
    if (c.self_timed && given(flag)) {
      usage(flag, "the " + name +
                      " dataset replays the trace's own timestamps; use "
                      "--trace-time-scale to slow it down or speed it up, or --no-self-timed");
    }
  }
  if (!c.self_timed && given("--trace-time-scale")) {
    usage("--trace-time-scale",
          "applies only to trace datasets replayed at their timestamps (mooncake, timed_trace, "
          "azure_trace, without --no-self-timed)");
  }
  // A comma-separated list runs one benchmark per value (vLLM's suite: qps_list,
  // max_concurrency_list; seeds 000 and 004).
  for (const std::string& item : run::split_list("--request-rate", f.request_rate))
    c.request_rates.push_back(positive_or_inf("--request-rate", item));
  c.request_rate = c.request_rates.front();
  c.burstiness = positive_or_inf("--burstiness", f.burstiness);
  c.probe_request_rate = parse_double("--probe-request-rate", f.probe_request_rate);
  if (!(c.probe_request_rate >= 0) || std::isinf(c.probe_request_rate))
    usage("--probe-request-rate", "must be a finite number >= 0, got " + f.probe_request_rate);
  if (given("--max-concurrency")) {
    for (const std::string& item : run::split_list("--max-concurrency", f.max_concurrency))
      c.max_concurrencies.push_back(
          static_cast<int>(parse_int("--max-concurrency", item, 1, 10'000'000)));
    c.max_concurrency = c.max_concurrencies.front();
  } else {
    c.max_concurrencies = {0};
  }
  if (c.request_rates.size() * c.max_concurrencies.size() > 1) {
    for (const char* flag : {"--result-filename", "--records"}) {
      if (given(flag))
        usage(flag, "names one file, but the --request-rate/--max-concurrency lists make " +
                        std::to_string(c.request_rates.size() * c.max_concurrencies.size()) +
                        " runs; use --result-dir (each run gets vLLM's file name)");
    }
  }

  // Bodies. vLLM forces ignore_eos for the random dataset on OpenAI-compatible backends, and for
  // timed_trace (its output lengths are the trace's); other datasets send it only with
  // --ignore-eos.
  c.ignore_eos = name == "random" || name == "timed_trace" || f.ignore_eos;
  c.extra_body_json = body_extras(f, &c.temperature_given);
  c.request_id_prefix =
      given("--request-id-prefix") ? f.request_id_prefix : run::default_request_id_prefix();
  // It goes into the x-request-id header line: a line break would start another header.
  if (has_control_character(c.request_id_prefix)) {
    usage("--request-id-prefix", "contains a line break or another control character");
  }
}

void check_reporting(const RawFlags& f, const Given& given, run::RunConfig& c) {
  // Measuring and reporting.
  c.percentile_metrics = run::parse_percentile_metrics(
      f.percentile_metrics.empty() ? std::string("ttft,tpot,itl") : f.percentile_metrics);
  c.percentiles = metrics::parse_percentiles(f.metric_percentiles);
  if (given("--goodput")) {
    if (f.goodput.empty()) usage("--goodput", "expected KEY:VALUE pairs (e.g. ttft:200 tpot:50)");
    c.goodput_slo_ms = metrics::parse_goodput(f.goodput);
  }
  c.metadata = run::parse_pairs("--metadata", f.metadata, '=');
  c.save_result = f.save_result;
  c.save_detailed = f.save_detailed;
  c.append_result = f.append_result;
  c.result_dir = f.result_dir;
  c.result_filename = f.result_filename;
  c.records_path = f.records;
  c.disable_tqdm = f.disable_tqdm;
  // A negative count runs none, as vLLM's range(num_warmups) does.
  c.num_warmups = static_cast<int>(
      std::max<int64_t>(0, parse_int("--num-warmups", f.num_warmups, INT32_MIN, 10'000'000)));
  c.ready_check_timeout_s = non_negative("--ready-check-timeout-sec", f.ready_check_timeout_sec);
  c.io_threads = static_cast<int>(parse_int("--io-threads", f.io_threads, 1, 256));
  if (f.http_engine == "auto") {
    c.http_engine = client::HttpEngine::kAuto;
  } else if (f.http_engine == "curl") {
    c.http_engine = client::HttpEngine::kCurl;
  } else if (f.http_engine == "http1") {
    c.http_engine = client::HttpEngine::kHttp1;
    // check_target ran first: base_url is the server's, or empty for the embedded simulator.
    if (!c.base_url.empty() && c.base_url.rfind("http://", 0) != 0)
      usage("--http-engine", "http1 serves plain http:// only, not '" +
                                 run::url_for_messages(c.base_url) +
                                 "'; use curl (or auto) for https");
  } else {
    usage("--http-engine", "unknown engine '" + f.http_engine + "'; use auto, http1 or curl");
  }
  if (f.arrival_clock != "kernel" && f.arrival_clock != "read")
    usage("--arrival-clock", "unknown clock '" + f.arrival_clock + "'; use kernel or read");
  c.kernel_arrival_times = f.arrival_clock == "kernel";
  c.drain_timeout_s = non_negative("--drain-timeout-sec", f.drain_timeout_sec);
  c.request_timeout_s = non_negative("--request-timeout-sec", f.request_timeout_sec);
  if (c.request_timeout_s <= 0) usage("--request-timeout-sec", "must be > 0");
  c.server_metrics = f.server_metrics;  // URLs are checked by probing them, before the run
  c.server_metrics_interval_s =
      run::parse_double("--server-metrics-interval", f.server_metrics_interval);
  if (!(c.server_metrics_interval_s >= 0.01 && c.server_metrics_interval_s <= 3600))
    usage("--server-metrics-interval", "seconds between scrapes must be in [0.01, 3600]");
}

void check_sim(const RawFlags& f, const Given& given, run::RunConfig& c) {
  // Embedded simulator.
  for (const char* flag :
       {"--sim-ttft-ms", "--sim-itl-ms", "--sim-ttft-jitter-ms", "--sim-itl-jitter-ms",
        "--sim-mode", "--sim-engine-profile", "--sim-threads", "--sim-fault", "--sim-trace-out"}) {
    if (given(flag)) {
      if (!c.embedded)
        usage(flag, "applies only to the embedded simulator (drop --base-url/--host/--port)");
    }
  }
  sim::Options& s = c.sim;
  s.host = "127.0.0.1";
  s.port = 0;
  s.seed = c.seed;
  s.threads = static_cast<int>(parse_int("--sim-threads", f.sim_threads, 1, 256));
  s.fixed.ttft = {non_negative("--sim-ttft-ms", f.sim_ttft_ms),
                  non_negative("--sim-ttft-jitter-ms", f.sim_ttft_jitter_ms)};
  s.fixed.itl = {non_negative("--sim-itl-ms", f.sim_itl_ms),
                 non_negative("--sim-itl-jitter-ms", f.sim_itl_jitter_ms)};
  if (f.sim_mode == "fixed") {
    s.mode = sim::Options::Mode::kFixed;
    c.sim_description = "fixed TTFT " + run::python_float(s.fixed.ttft.mean_ms) + " ms, ITL " +
                        run::python_float(s.fixed.itl.mean_ms) + " ms";
  } else if (f.sim_mode == "engine") {
    s.mode = sim::Options::Mode::kEngine;
    if (!f.sim_engine_profile.empty()) s.engine = sim::load_engine_profile(f.sim_engine_profile);
    c.sim_description = "engine model, profile '" + s.engine.name + "'";
  } else {
    usage("--sim-mode", "unknown mode '" + f.sim_mode + "'; use fixed or engine");
  }
  s.trace_out = f.sim_trace_out;
  s.trace_out_flag = "--sim-trace-out";
  for (const auto& spec : f.sim_fault)
    s.faults.push_back(sim::parse_fault_rule(spec, "--sim-fault"));
  if (!s.faults.empty())
    c.sim_description += ", " + std::to_string(s.faults.size()) + " fault rule(s)";
  if (given("--sim-engine-profile") && s.mode != sim::Options::Mode::kEngine) {
    usage("--sim-engine-profile", "needs --sim-mode engine");
  }
}

// Every value option given must have a value ("--num-prompts" alone, or "--model ''"), but
// --request-id-prefix: vLLM's ids are then the bare indexes.
void check_values_present(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->count() == 0 || opt->get_type_size() == 0) continue;  // absent, or a switch
    if (opt->get_lnames().front() == "request-id-prefix") continue;
    for (const std::string& value : opt->results()) {
      if (value.empty()) usage("--" + opt->get_lnames().front(), "needs a value");
    }
  }
}

// The files a run reads and writes must be different files: a records file written over the
// dataset, or a trace opened (truncated) before the dataset is read, would destroy the input.
void check_distinct_files(const RawFlags& f, const Given& given) {
  std::vector<std::pair<const char*, std::string>> files;
  auto add = [&](const char* flag, const std::string& path) {
    if (given(flag) && !path.empty()) files.emplace_back(flag, path);
  };
  add("--dataset-path", f.dataset_path);
  add("--records", f.records);
  add("--sim-trace-out", f.sim_trace_out);
  if (f.save_result || f.append_result) {
    add("--result-filename", (std::filesystem::path(f.result_dir) / f.result_filename).string());
  }
  auto canonical = [](const std::string& path) {
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec).lexically_normal();
    std::filesystem::path full = std::filesystem::weakly_canonical(absolute, ec);
    return ec ? absolute : full;
  };
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t j = i + 1; j < files.size(); ++j) {
      if (canonical(files[i].second) == canonical(files[j].second)) {
        usage(files[j].first, "'" + files[j].second + "' is also " + files[i].first +
                                  "; the two must be different files");
      }
    }
  }
}

run::RunConfig validate(const RawFlags& f, const CLI::App& sub) {
  reject_extras(sub.remaining());
  check_values_present(sub);
  Given given = [&](const char* flag) { return sub.get_option(flag)->count() > 0; };
  run::RunConfig c;
  check_target(f, given, c);
  check_dataset(f, given, c);
  check_reporting(f, given, c);
  check_sim(f, given, c);
  check_distinct_files(f, given);
  run::apply_load_flags(f.load, given, c);
  run::apply_target_flags(f.sim_instances, given, c);
  run::apply_stage_flags(f.stages, given, c);
  run::apply_ramp_up_flags(f.ramp_up, given, c);  // after the load shapes that refuse it
  return c;
}

}  // namespace

Action add_run_command(CLI::App& app, bool check_only) {
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
  // Repeated, the values are joined with '\n' and read as a list (run_targets.h).
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
  opt("--sim-threads", f->sim_threads, "simulator I/O threads", simg);
  list("--sim-fault", f->sim_fault,
       "fault rules KIND[:PROB[:AFTER_TOKENS[:STALL_S]]] (as servebench sim --fault)", simg);
  opt("--sim-trace-out", f->sim_trace_out,
      "server-side times per request (JSONL, as servebench sim --trace-out)", simg);

  auto search = std::make_shared<run::SearchFlags>();  // --search-slo (run_search.cpp)
  run::add_search_flags(*sub, search);
  return [f, sub, check_only, search]() -> int {
    run::RunConfig config = validate(*f, *sub);
    if (run::search_requested(*sub, *search)) {
      const run::SearchPlan plan = run::validate_search(*search, config);
      return check_only ? 0 : run::execute_search(std::move(config), plan);
    }
    return check_only ? 0 : run::execute_run(std::move(config));
  };
}

}  // namespace servebench::cli
