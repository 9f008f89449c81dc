// `servebench run`'s flags checked and turned into a run::Spec (run_flags.h).
//
// Numbers are read as text and converted here, so that every bad value gives one line naming
// the flag and exit code 2 (core::Error kUsage), the same as an unknown flag.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/dataset_flags.h"
#include "cli/run_flags.h"
#include "cli/target_flags.h"
#include "cli/values.h"
#include "client/client.h"
#include "core/error.h"
#include "metrics/metrics.h"
#include "run/names.h"
#include "sim/model/timing_model.h"

namespace servebench::cli {
namespace {

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

// vLLM flags servebench does not implement yet: named as such instead of "unknown".
// (vLLM's --profile, the torch profiler switch, is GuideLLM's --profile here: load_flags.h.)
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

void check_target(const RawFlags& f, const Given& given, run::Spec& c) {
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
    // Several URLs (a comma list, or the flag repeated) are several targets (run/targets.h).
    c.target_urls = parse_base_urls(f.base_url);
    c.base_url = c.target_urls.front();
  } else if (!c.embedded) {
    int port = static_cast<int>(parse_int("--port", f.port, 1, 65535));
    bool v6 = f.host.find(':') != std::string::npos;
    c.base_url = "http://" + (v6 ? "[" + f.host + "]" : f.host) + ":" + std::to_string(port);
  }
  for (const auto& [k, v] : parse_pairs("--header", f.header, '=')) {
    if (!is_header_name(k)) {
      usage("--header", "'" + k + "' is not a header name (letters, digits and !#$%&'*+-.^_`|~)");
    }
    // A framing header would corrupt every request; named by its name, never its value.
    client::check_extra_header(k, "--header '" + k + "'");
    if (core::is_secret_header(k)) register_credential(v);
    c.headers.push_back(k + ": " + v);
  }
  // URL credentials are secrets before any thread (simulator, scrapes, probes) can report them.
  for (const std::string& url : c.target_urls) {
    client::Endpoint endpoint;
    endpoint.url = url + c.endpoint;
    client::register_endpoint_secrets(endpoint);
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
  if (given("--ca-cert")) {
    std::error_code ec;
    if (f.ca_cert.empty()) usage("--ca-cert", "expected a PEM file of CA certificates");
    if (std::filesystem::is_directory(f.ca_cert, ec))
      usage("--ca-cert", "'" + f.ca_cert + "' is a directory; expected a PEM file");
    if (::access(f.ca_cert.c_str(), R_OK) != 0)
      usage("--ca-cert", "'" + f.ca_cert + "' cannot be read: " + std::strerror(errno));
    c.ca_file = f.ca_cert;
  }
  c.model = f.model;
  c.served_model_name = f.served_model_name;
  // Loaded by the run part (run/point_setup.h; docs/tokenizers.md says how a name resolves).
  c.tokenizer = f.tokenizer;
}

void check_dataset(const RawFlags& f, const Given& given, run::Spec& c) {
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
  check_random_dataset_flags(f, given, c.dataset.random);
  check_other_dataset_flags(f, given, c);
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
  for (const std::string& item : split_list("--request-rate", f.request_rate))
    c.request_rates.push_back(positive_or_inf("--request-rate", item));
  c.request_rate = c.request_rates.front();
  c.burstiness = positive_or_inf("--burstiness", f.burstiness);
  c.probe_request_rate = parse_double("--probe-request-rate", f.probe_request_rate);
  if (!(c.probe_request_rate >= 0) || std::isinf(c.probe_request_rate))
    usage("--probe-request-rate", "must be a finite number >= 0, got " + f.probe_request_rate);
  if (given("--max-concurrency")) {
    for (const std::string& item : split_list("--max-concurrency", f.max_concurrency))
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
      given("--request-id-prefix") ? f.request_id_prefix : default_request_id_prefix();
  // It goes into the x-request-id header line: a line break would start another header.
  if (has_control_character(c.request_id_prefix)) {
    usage("--request-id-prefix", "contains a line break or another control character");
  }
}

void check_reporting(const RawFlags& f, const Given& given, run::Spec& c) {
  // Measuring and reporting.
  c.percentile_metrics = parse_percentile_metrics(
      f.percentile_metrics.empty() ? std::string("ttft,tpot,itl") : f.percentile_metrics);
  c.percentiles = metrics::parse_percentiles(f.metric_percentiles);
  if (given("--goodput")) {
    if (f.goodput.empty()) usage("--goodput", "expected KEY:VALUE pairs (e.g. ttft:200 tpot:50)");
    c.goodput_slo_ms = metrics::parse_goodput(f.goodput);
  }
  c.metadata = parse_pairs("--metadata", f.metadata, '=');
  c.save_result = f.save_result;
  c.save_detailed = f.save_detailed;
  c.append_result = f.append_result;
  c.result_dir = f.result_dir;
  c.result_filename = f.result_filename;
  c.records_path = f.records;
  c.disable_tqdm = f.disable_tqdm;
  c.live = f.live;
  // vLLM's range(num_warmups) runs none for a negative count; here it is refused as the typo it
  // most likely is (-1 meant as "none" is 0).
  c.num_warmups = static_cast<int>(parse_int("--num-warmups", f.num_warmups, 0, 10'000'000));
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
      parse_double("--server-metrics-interval", f.server_metrics_interval);
  if (!(c.server_metrics_interval_s >= 0.01 && c.server_metrics_interval_s <= 3600))
    usage("--server-metrics-interval", "seconds between scrapes must be in [0.01, 3600]");
}

// --sim-deployment: the file is read when the run starts it (run::execute); here, what it
// cannot go with.
void check_sim_deployment(const RawFlags& f, const Given& given, run::Spec& c) {
  if (!given("--sim-deployment")) return;
  for (const char* flag : {"--base-url", "--host", "--port"}) {
    if (given(flag)) usage("--sim-deployment", std::string("starts its own servers; drop ") + flag);
  }
  if (given("--sim-instances"))
    usage("--sim-deployment", "gives one target per frontend; drop --sim-instances");
  if (given("--sim-engine-profile"))
    usage("--sim-deployment", "its workers' costs come from the file; drop --sim-engine-profile");
  c.sim_deployment = f.sim_deployment;
}

void check_sim(const RawFlags& f, const Given& given, run::Spec& c) {
  check_sim_deployment(f, given, c);  // before the flags it refuses are read
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

// --shard and --start-at (run.h: the shard's defaults come from the environment).
void check_shard(const RawFlags& f, const Given& given, run::Spec& c) {
  if (given("--shard")) {
    c.shard = run::parse_shard(f.shard, [](const std::string& name) -> std::optional<std::string> {
      const char* value = std::getenv(name.c_str());
      if (value == nullptr) return std::nullopt;
      return std::string(value);
    });
  }
  if (given("--start-at")) {
    if (!given("--shard")) usage("--start-at", "needs --shard (K/N; 0/1 for a single process)");
    c.shard.start_at_ns = run::parse_start_at_ns(f.start_at);
  }
}

// --num-runs: how many times each point runs; --seed given fixes the arrivals of every run.
void check_repeats(const RawFlags& f, const Given& given, run::Spec& c) {
  c.seed_given = given("--seed");
  c.num_runs = static_cast<int>(parse_int("--num-runs", f.num_runs, 1, 1000));
  if (c.num_runs == 1) return;
  if (c.shard.count > 0)
    usage("--num-runs", "cannot be combined with --shard (merge the shards of each run instead)");
  if (run::runs_several_targets(c))
    usage("--num-runs",
          "cannot be combined with several targets (--base-url A,B or "
          "--sim-instances); run each target on its own");
}

}  // namespace

run::Spec spec_from_flags(const RawFlags& f, const CLI::App& sub) {
  reject_extras(sub.remaining());
  check_values_present(sub);
  Given given = [&](const char* flag) { return sub.get_option(flag)->count() > 0; };
  run::Spec c;
  check_target(f, given, c);
  check_dataset(f, given, c);
  check_reporting(f, given, c);
  check_sim(f, given, c);
  check_distinct_files(f, given);
  check_shard(f, given, c);
  apply_load_flags(f.load, given, c);
  apply_target_flags(f.sim_instances, given, c);
  apply_stage_flags(f.stages, given, c);
  apply_ramp_up_flags(f.ramp_up, given, c);  // after the load shapes that refuse it
  check_repeats(f, given, c);                // after the targets it refuses
  return c;
}

}  // namespace servebench::cli
