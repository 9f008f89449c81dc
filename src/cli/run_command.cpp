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
#include <functional>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/run_config.h"
#include "cli/run_support.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "sim/model/timing_model.h"

namespace servebench::cli {
namespace {

using run::parse_double;
using run::parse_int;

[[noreturn]] void usage(const std::string& flag, const std::string& message) {
  throw core::Error(core::ErrorKind::kUsage, flag, message);
}

// Flags as given, before conversion. Defaults are vLLM's.
struct RawFlags {
  std::string backend = "openai", endpoint_type, label, base_url, host = "127.0.0.1", port = "8000",
              endpoint = "/v1/completions";
  std::vector<std::string> header, metadata, goodput;
  std::string max_concurrency, model, served_model_name, tokenizer, tokenizer_mode = "auto";
  std::string input_len, output_len, dataset_name = "random", dataset_path;
  std::string num_prompts = "1000", seed = "0";
  std::string random_input_len = "1024", random_output_len = "128", random_range_ratio = "0.0",
              random_prefix_len = "0";
  std::string request_rate = "inf", burstiness = "1.0";
  bool disable_tqdm = false, save_result = false, save_detailed = false, append_result = false,
       ignore_eos = false, insecure = false, trust_remote_code = false;
  std::string num_warmups = "0", result_dir, result_filename;
  std::string percentile_metrics, metric_percentiles = "99", request_id_prefix;
  std::string top_p, top_k, min_p, temperature, frequency_penalty, presence_penalty,
      repetition_penalty;
  std::string ready_check_timeout_sec = "0", extra_body;
  // servebench
  std::string records, io_threads = "1", drain_timeout_sec = "10", http_engine = "auto";
  std::string sim_ttft_ms = "50", sim_itl_ms = "10", sim_ttft_jitter_ms = "0",
              sim_itl_jitter_ms = "0", sim_mode = "fixed", sim_engine_profile, sim_threads = "1",
              sim_trace_out;
  std::vector<std::string> sim_fault;
};

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

// vLLM flags servebench does not implement yet: named as such instead of "unknown".
const std::set<std::string> kVllmOnlyFlags = {"--profile",
                                              "--lora-modules",
                                              "--lora-assignment",
                                              "--ramp-up-strategy",
                                              "--ramp-up-start-rps",
                                              "--ramp-up-end-rps",
                                              "--logprobs",
                                              "--use-beam-search",
                                              "--plot-timeline",
                                              "--timeline-itl-thresholds",
                                              "--plot-dataset-stats",
                                              "--self-timed",
                                              "--no-self-timed",
                                              "--probe-request-rate",
                                              "--skip-tokenizer-init",
                                              "--chat-template-kwargs",
                                              "--no-stream",
                                              "--no-oversample",
                                              "--skip-chat-template",
                                              "--disable-shuffle",
                                              "--random-batch-size",
                                              "--sharegpt-output-len",
                                              "--custom-output-len",
                                              "--hf-subset",
                                              "--hf-split",
                                              "--hf-name",
                                              "--hf-output-len",
                                              "--sonnet-input-len",
                                              "--sonnet-output-len",
                                              "--sonnet-prefix-len"};

void reject_extras(const std::vector<std::string>& extras) {
  if (extras.empty()) return;
  const std::string& first = extras.front();
  if (first.rfind("--", 0) == 0) {
    std::string name = first.substr(0, first.find('='));
    std::replace(name.begin() + 2, name.end(), '_', '-');
    if (kVllmOnlyFlags.count(name) || name.rfind("--random-mm", 0) == 0 ||
        name.rfind("--prefix-repetition", 0) == 0) {
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
    c.base_url = f.base_url;
    while (!c.base_url.empty() && c.base_url.back() == '/') c.base_url.pop_back();
    if (c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0) {
      usage("--base-url",
            "must start with http:// or https://, got '" + run::url_for_messages(f.base_url) + "'");
    }
  } else if (!c.embedded) {
    int port = static_cast<int>(parse_int("--port", f.port, 1, 65535));
    bool v6 = f.host.find(':') != std::string::npos;
    c.base_url = "http://" + (v6 ? "[" + f.host + "]" : f.host) + ":" + std::to_string(port);
  }
  for (const auto& [k, v] : run::parse_pairs("--header", f.header, '='))
    c.headers.push_back(k + ": " + v);
  if (const char* key = std::getenv("OPENAI_API_KEY")) c.api_key = key;
  c.insecure = f.insecure;
  c.model = f.model;
  c.served_model_name = f.served_model_name;
  if (!f.tokenizer.empty() && f.tokenizer != "builtin" && f.tokenizer != "builtin-word") {
    usage("--tokenizer",
          "real tokenizers are not supported yet; servebench counts tokens with its built-in word "
          "rule (omit --tokenizer)");
  }
}

void check_dataset(const RawFlags& f, const Given& given, run::RunConfig& c) {
  // Dataset.
  static const std::set<std::string> kVllmDatasets = {
      "sharegpt", "burstgpt",          "sonnet",     "random-mm",  "random-rerank", "hf",
      "custom",   "prefix_repetition", "spec_bench", "txt-slices", "timed_trace"};
  if (f.dataset_name != "random") {
    if (kVllmDatasets.count(f.dataset_name)) {
      usage("--dataset-name",
            "'" + f.dataset_name + "' is not supported by servebench yet; use random");
    }
    usage("--dataset-name", "unknown dataset '" + f.dataset_name + "'; use random");
  }
  if (given("--dataset-path")) {
    usage("--dataset-path",
          "the random dataset takes no --dataset-path (got '" + f.dataset_path + "')");
  }
  c.num_prompts = static_cast<int>(parse_int("--num-prompts", f.num_prompts, 1, 100'000'000));
  c.seed = static_cast<uint64_t>(parse_int("--seed", f.seed, 0, INT64_MAX));
  c.random.seed = c.seed;
  c.random.input_len = static_cast<int32_t>(
      given("--input-len") ? parse_int("--input-len", f.input_len, 0, 10'000'000)
                           : parse_int("--random-input-len", f.random_input_len, 0, 10'000'000));
  c.random.output_len = static_cast<int32_t>(
      given("--output-len") ? parse_int("--output-len", f.output_len, 1, 10'000'000)
                            : parse_int("--random-output-len", f.random_output_len, 1, 10'000'000));
  c.random.range_ratio = parse_double("--random-range-ratio", f.random_range_ratio);
  if (!(c.random.range_ratio >= 0 && c.random.range_ratio < 1)) {
    usage("--random-range-ratio", "must be in [0, 1), got " + f.random_range_ratio);
  }
  c.random.prefix_len =
      static_cast<int32_t>(parse_int("--random-prefix-len", f.random_prefix_len, 0, 10'000'000));
  if (c.random.prefix_len + std::floor(c.random.input_len * (1 - c.random.range_ratio)) < 1) {
    usage("--random-input-len", "too small: the shortest prompt would have 0 tokens");
  }

  // Traffic.
  c.request_rate = positive_or_inf("--request-rate", f.request_rate);
  c.burstiness = positive_or_inf("--burstiness", f.burstiness);
  if (given("--max-concurrency")) {
    c.max_concurrency =
        static_cast<int>(parse_int("--max-concurrency", f.max_concurrency, 1, 10'000'000));
  }

  // Bodies. vLLM forces ignore_eos for the random dataset on OpenAI-compatible backends.
  c.ignore_eos = true;
  c.extra_body_json = body_extras(f, &c.temperature_given);
  c.request_id_prefix =
      given("--request-id-prefix") ? f.request_id_prefix : run::default_request_id_prefix();
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
  c.num_warmups = static_cast<int>(parse_int("--num-warmups", f.num_warmups, 0, 10'000'000));
  c.ready_check_timeout_s = non_negative("--ready-check-timeout-sec", f.ready_check_timeout_sec);
  c.io_threads = static_cast<int>(parse_int("--io-threads", f.io_threads, 1, 256));
  if (f.http_engine == "auto") {
    c.http_engine = client::HttpEngine::kAuto;
  } else if (f.http_engine == "curl") {
    c.http_engine = client::HttpEngine::kCurl;
  } else if (f.http_engine == "http1") {
    c.http_engine = client::HttpEngine::kHttp1;
  } else {
    usage("--http-engine", "unknown engine '" + f.http_engine + "'; use auto, http1 or curl");
  }
  c.drain_timeout_s = non_negative("--drain-timeout-sec", f.drain_timeout_sec);
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
  for (const auto& spec : f.sim_fault)
    s.faults.push_back(sim::parse_fault_rule(spec, "--sim-fault"));
  if (!s.faults.empty())
    c.sim_description += ", " + std::to_string(s.faults.size()) + " fault rule(s)";
  if (given("--sim-engine-profile") && s.mode != sim::Options::Mode::kEngine) {
    usage("--sim-engine-profile", "needs --sim-mode engine");
  }
}

// Every value option given must have a value ("--num-prompts" alone, or "--model ''").
void check_values_present(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->count() == 0 || opt->get_type_size() == 0) continue;  // absent, or a switch
    for (const std::string& value : opt->results()) {
      if (value.empty()) usage("--" + opt->get_lnames().front(), "needs a value");
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
  return c;
}

}  // namespace

Action add_run_command(CLI::App& app) {
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
    return sub->add_option(names(name), target, text)->expected(0, 1)->group(group);
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
  opt("--base-url", f->base_url, "server base URL, instead of --host/--port", target);
  opt("--host", f->host, "server host", target);
  opt("--port", f->port, "server port", target);
  opt("--endpoint", f->endpoint, "API path (openai-chat defaults to /v1/chat/completions)", target);
  list("--header", f->header, "KEY=VALUE headers sent with every request", target);
  opt("--model", f->model,
      "model name (default: the server's first model; embedded: servebench-sim)", target);
  opt("--served-model-name", f->served_model_name,
      "the \"model\" sent in requests (default: --model)", target);
  opt("--tokenizer", f->tokenizer, "only the built-in word rule for now (\"builtin\")", target);
  opt("--tokenizer-mode", f->tokenizer_mode, "accepted for compatibility; ignored", target);
  flag("--trust-remote-code", f->trust_remote_code, "accepted for compatibility; ignored", target);
  flag("--insecure", f->insecure, "skip TLS certificate verification", target);
  opt("--ready-check-timeout-sec", f->ready_check_timeout_sec,
      "retry the initial test request this long (0: one try)", target);

  opt("--dataset-name", f->dataset_name, "random (others are not supported yet)", data);
  opt("--dataset-path", f->dataset_path, "path of a dataset file (not used by random)", data);
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

  opt("--request-rate", f->request_rate, "requests per second (inf: all at once)", traffic);
  opt("--burstiness", f->burstiness, "gamma shape of the gaps: 1 Poisson, <1 burstier, >1 steadier",
      traffic);
  opt("--max-concurrency", f->max_concurrency, "at most this many requests in flight", traffic);
  opt("--num-warmups", f->num_warmups, "warmup requests before the run (not measured)", traffic);

  flag("--ignore-eos", f->ignore_eos, "send ignore_eos (always on for the random dataset)", body);
  opt("--extra-body", f->extra_body, "JSON object merged into every request body", body);
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
  opt("--drain-timeout-sec", f->drain_timeout_sec,
      "after Ctrl-C, wait this long for requests in flight", extra);

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

  return [f, sub]() -> int { return run::execute_run(validate(*f, *sub)); };
}

}  // namespace servebench::cli
