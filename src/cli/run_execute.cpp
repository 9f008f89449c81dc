// The flow of `servebench run`, in vLLM's order (serve.py main_async + benchmark): target and
// model → prompts → arrival times → initial test request → warmups → the run, each record
// appended to the records file as it finishes → vLLM's console block → result JSON.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/run_config.h"
#include "cli/run_probes.h"
#include "cli/run_profiles.h"
#include "cli/run_ramp_up.h"
#include "cli/run_server_metrics.h"
#include "cli/run_stages.h"
#include "cli/run_support.h"
#include "cli/run_targets.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/system.h"
#include "dataset/dataset.h"
#include "metrics/metrics.h"
#include "record/record.h"
#include "report/report.h"
#include "report/tables.h"
#include "schedule/schedule.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::cli::run {
std::vector<client::PlannedRequest> plan_at(const std::vector<int64_t>& times,
                                            const std::vector<dataset::Prompt>& prompts) {
  std::vector<client::PlannedRequest> plan(times.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    const dataset::Prompt& p = prompts[i % prompts.size()];
    plan[i].index = i;
    plan[i].intended_ns = times[i];
    plan[i].prompt = p.text;
    plan[i].prompt_tokens = p.prompt_tokens;
    plan[i].max_tokens = p.output_tokens;
    plan[i].conversation = p.conversation;
    plan[i].turn = p.turn;
    if (p.turn > 0) plan[i].follows = static_cast<int64_t>(i) - 1;  // turns are in order
  }
  return plan;
}

namespace {

namespace fs = std::filesystem;

// ---- SIGINT: the first stops sending (in-flight requests get the drain time), the second exits
// at once; the records file is flushed line by line, so nothing measured is lost.
std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  if (g_interrupts.fetch_add(1) >= 1) {
    const char msg[] = "\nservebench: interrupted again; exiting now\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(130);
  }
  g_stop.store(true);
  const char msg[] =
      "\nservebench: interrupted; sending no more requests and waiting for those in flight "
      "(Ctrl-C again to exit now)\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

class SigintHandler {
 public:
  // `fresh`: forget earlier interrupts (not for the second and later of several targets: a
  // Ctrl-C while the first one waits for them must still stop the run).
  explicit SigintHandler(bool fresh) {
    if (fresh) {
      g_stop.store(false);
      g_interrupts.store(0);
    }
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_);
  }
  ~SigintHandler() { sigaction(SIGINT, &previous_, nullptr); }

 private:
  struct sigaction previous_ {};
};

// ---- files

class RecordsFile {
 public:
  // `flag`: the flag that chose the path, for the message.
  RecordsFile(const std::string& path, const char* flag) : path_(path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      throw core::Error(core::ErrorKind::kInput, flag,
                        "cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  ~RecordsFile() {
    flush();
    if (fd_ >= 0) ::close(fd_);
  }
  RecordsFile(const RecordsFile&) = delete;
  RecordsFile& operator=(const RecordsFile&) = delete;

  // One line per finished request, kept until flush(): the client calls it after each batch of
  // records it delivers (finished within a few ms of each other), so a killed run keeps what it
  // measured and a busy one makes one write(2) per batch, not per request.
  void append(const record::RequestRecord& r) {
    if (fd_ < 0) return;
    if (pending_.empty()) first_pending_index_ = r.index;
    pending_ += record::to_json_line(r);
    pending_ += '\n';
    if (pending_.size() >= kMaxPendingBytes) flush();
  }

  // Hands the pending lines to the kernel. A failed write (a full disk) is said once; the run and
  // its result go on without the rest of the file.
  void flush() {
    const char* at = pending_.data();
    size_t left = pending_.size();
    while (fd_ >= 0 && left > 0) {
      const ssize_t written = ::write(fd_, at, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        std::fprintf(stderr,
                     "servebench: --records '%s': write failed (%s); the record of request %llu "
                     "and those delivered after it are not in the file (the result counts "
                     "them)\n",
                     path_.c_str(), written < 0 ? std::strerror(errno) : "nothing written",
                     static_cast<unsigned long long>(first_pending_index_));
        ::close(fd_);
        fd_ = -1;
        break;
      }
      at += written;
      left -= static_cast<size_t>(written);
    }
    pending_.clear();
  }

  // `options` with flush() after each batch of delivered records.
  client::RunOptions flushing(const client::RunOptions& options) {
    client::RunOptions with_flush = options;
    with_flush.after_records = [this] { flush(); };
    return with_flush;
  }

 private:
  static constexpr size_t kMaxPendingBytes = 1 << 20;
  std::string path_;
  int fd_ = -1;
  std::string pending_;
  uint64_t first_pending_index_ = 0;
};

void make_dir(const std::string& dir, const char* flag) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot create '" + dir + "': " + ec.message());
}

struct Paths {
  std::string result;   // "" unless --save-result / --append-result
  std::string records;  // "" = no records file
  // The flags that chose them, for messages.
  const char* result_flag = "--save-result";
  const char* records_flag = "--records";
};

// vLLM's compute_result_filename, and the records file beside it (or in --result-dir).
Paths output_paths(const RunConfig& c, const std::string& model_id, const std::string& date) {
  Paths p;
  const std::string label = c.label.empty() ? c.backend : c.label;
  std::string name = c.result_filename;
  if (name.empty()) {
    name = c.ramp_up
               ? ramp_up_result_file_name(label, *c.ramp_up, c.max_concurrency, model_id, date)
               : result_file_name(label, c.request_rate, c.max_concurrency, model_id, date);
  }
  std::string in_dir = c.result_dir.empty() ? name : (fs::path(c.result_dir) / name).string();
  if (c.save_result || c.append_result) p.result = in_dir;
  if (!c.result_filename.empty()) {
    p.result_flag = "--result-filename";
  } else if (!c.result_dir.empty()) {
    p.result_flag = "--result-dir";
  }
  if (!c.records_path.empty()) {
    p.records = c.records_path;
  } else if (!p.result.empty() || !c.result_dir.empty()) {
    std::string stem = in_dir.size() > 5 && in_dir.ends_with(".json")
                           ? in_dir.substr(0, in_dir.size() - 5)
                           : in_dir;
    p.records = stem + ".records.jsonl";
    p.records_flag = p.result_flag;
  }
  make_dir(c.result_dir, "--result-dir");
  if (!p.records.empty()) make_dir(fs::path(p.records).parent_path().string(), p.records_flag);
  if (!p.result.empty()) check_writable(p.result, p.result_flag);
  return p;
}

void save_result(const std::string& path, const nlohmann::json& result, bool append,
                 const char* flag) {
  auto fail = [&] {
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot write '" + path + "': " + std::strerror(errno));
  };
  errno = 0;
  std::ofstream out(path, append ? std::ios::app : std::ios::trunc);
  if (!out) fail();
  if (append && fs::exists(path) && fs::file_size(path) > 0) out << "\n";
  out << result.dump();
  if (!out.flush()) fail();
}

// ---- steps

struct Target {
  std::unique_ptr<sim::Server> server;  // the embedded simulator, when used
  client::Endpoint endpoint;
  std::string model_id;      // what results name the model by
  std::string tokenizer_id;  // what results name the tokenizer by
};

// The run's tokenizer and what results call it (vLLM: --tokenizer, else --model).
struct RunTokenizer {
  std::shared_ptr<const tokenizer::Tokenizer> tok;
  std::string id;
};

// --tokenizer when given; else the tokenizer of `model` when it resolves locally (a path, or a
// model id in the Hugging Face cache), as vLLM defaults --tokenizer to --model; else the
// built-in word rule, with a notice when a model was named but no tokenizer was found for it.
RunTokenizer tokenizer_for(const std::string& spec, const std::string& model) {
  if (spec == "builtin" || spec == "builtin-word")
    return {tokenizer::make_word_tokenizer(), "builtin-word"};
  if (!spec.empty()) return {tokenizer::load_tokenizer(spec), spec};
  if (!model.empty()) {
    if (!tokenizer::find_tokenizer_file(model).empty())
      return {tokenizer::load_tokenizer(model), model};
    std::fprintf(stderr,
                 "servebench: no local tokenizer for model '%s' (not a path, not in the Hugging "
                 "Face cache %s): counting tokens with the built-in word rule; pass --tokenizer "
                 "to choose one\n",
                 model.c_str(), tokenizer::hf_hub_cache_dir().c_str());
  }
  return {tokenizer::make_word_tokenizer(), "builtin-word"};
}

Target resolve_target(RunConfig& c, const std::shared_ptr<const tokenizer::Tokenizer>& tok) {
  Target t;
  std::string served = c.served_model_name;
  if (c.embedded) {
    t.model_id = c.model.empty() ? "servebench-sim" : c.model;
    if (served.empty()) served = t.model_id;
    c.sim.served_model_name = served;
    c.sim.tokenizer = tok;
    t.server = std::make_unique<sim::Server>(c.sim);
    t.server->start();
    c.base_url = "http://127.0.0.1:" + std::to_string(t.server->port());
    std::fprintf(stderr,
                 "servebench: no --base-url/--host/--port given: started the embedded simulator "
                 "at %s (model '%s', %s)\n",
                 c.base_url.c_str(), served.c_str(), c.sim_description.c_str());
  } else if (c.model.empty()) {
    std::printf("Model not specified, fetching first model from server...\n");
    ServerModel m = first_server_model(c.base_url, c.headers, c.api_key, c.insecure,
                                       std::max(10.0, c.ready_check_timeout_s));
    std::printf("First model name: %s, first model id: %s\n", m.id.c_str(), m.root.c_str());
    t.model_id = m.root;
    if (served.empty()) served = m.id;
  } else {
    t.model_id = c.model;
  }
  t.endpoint.url = c.base_url + c.endpoint;
  t.endpoint.api = c.api;
  t.endpoint.model = served.empty() ? t.model_id : served;
  t.endpoint.headers = c.headers;
  t.endpoint.api_key = c.api_key;
  t.endpoint.timeout_s = c.request_timeout_s;
  t.endpoint.insecure = c.insecure;
  return t;
}

std::vector<dataset::Prompt> make_prompts(const RunConfig& c, const tokenizer::Tokenizer& tok) {
  dataset::DatasetReport report;
  auto prompts = dataset::make_prompts(static_cast<size_t>(c.num_prompts), c.dataset, tok, &report);
  for (const std::string& note : report.notes) {
    std::fprintf(stderr, "servebench: %s dataset: %s\n", c.dataset.name.c_str(), note.c_str());
  }
  return prompts;
}

// The prompts with their intended send times at this run's rate (the same prompts for every
// run of a sweep, as vLLM's suite reuses its seed).
std::vector<client::PlannedRequest> make_plan(const RunConfig& c,
                                              const std::vector<dataset::Prompt>& prompts) {
  if (c.stage_index >= 0) return stage_plan(c, prompts);  // --stages (run_stages.cpp)
  if (c.limits.bounds_plan() && !c.self_timed)
    return bounded_plan(c, prompts);  // --duration / --profile (run_profiles.cpp)
  std::vector<int64_t> times;
  if (c.self_timed) {
    std::vector<int64_t> offsets(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) offsets[i] = prompts[i].trace_offset_ns;
    times = schedule::trace_times_ns(offsets, c.trace_time_scale);
  } else {
    schedule::ArrivalOptions arrivals;
    arrivals.request_rate = c.request_rate;
    arrivals.burstiness = c.burstiness;
    arrivals.seed = c.seed;
    arrivals.ramp_up = c.ramp_up;
    // Multi-turn: the arrivals (and a ramp-up's requests) are the conversations' first turns; a
    // later turn is sent when the turn before it ends (client.h).
    const size_t first_turns = static_cast<size_t>(std::count_if(
        prompts.begin(), prompts.end(), [](const dataset::Prompt& p) { return p.turn == 0; }));
    const std::vector<int64_t> starts = schedule::arrival_times_ns(first_turns, arrivals);
    for (size_t i = 0, next = 0; i < prompts.size(); ++i)
      times.push_back(prompts[i].turn == 0 ? starts[next++] : times.back());
  }
  return plan_at(times, prompts);
}

// Every request in flight holds a socket (two with the embedded simulator, which serves from
// the same process). Past the open-files limit, requests fail with "Couldn't connect": say so
// before the run rather than leave the user to guess from the failures.
void warn_if_too_few_files(const RunConfig& c) {
  const uint64_t limit = core::raise_open_files_limit();
  const uint64_t in_flight = static_cast<uint64_t>(
      c.max_concurrency > 0 ? std::min(c.max_concurrency, c.num_prompts) : c.num_prompts);
  const uint64_t needed = in_flight * (c.embedded ? 2 : 1) + 64;
  if (limit == 0 || needed <= limit) return;
  if (c.embedded) {
    // Client and simulator share one descriptor table: the client's connections can take the
    // slots the simulator needs to accept them, and both then wait on each other.
    const uint64_t fits = limit > 64 ? (limit - 64) / 2 : 0;
    throw core::Error(
        core::ErrorKind::kUsage, "--max-concurrency",
        fmt::format("up to {} requests may be in flight, each holding two descriptors with the "
                    "embedded simulator, but the open-files limit is {} (ulimit -n): raise the "
                    "hard limit, or pass --max-concurrency {} or less",
                    in_flight, limit, std::max<uint64_t>(fits, 1)));
  }
  std::fprintf(stderr,
               "servebench: warning: up to %llu requests may be in flight, but the open-files "
               "limit is %llu (ulimit -n): requests past it fail to connect. Raise the hard "
               "limit, or cap them with --max-concurrency.\n",
               static_cast<unsigned long long>(in_flight), static_cast<unsigned long long>(limit));
}

void initial_test_run(const RunConfig& c, const client::Endpoint& endpoint) {
  std::printf("Starting initial single prompt test run...\n");
  std::fflush(stdout);
  try {
    client::wait_until_ready(endpoint, c.ready_check_timeout_s);
  } catch (const core::Error& e) {
    throw core::Error(e.kind(), "initial test run",
                      std::string(e.what()) + " (url " + url_for_messages(endpoint.url) + ")");
  }
  std::printf("Initial test run completed.\n");
}

void run_warmups(const RunConfig& c, const client::Endpoint& ep, const client::BodyOptions& body,
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

// What only the run command knows about the run; the report adds the client's health.
nlohmann::json run_state_json(bool interrupted, size_t not_sent) {
  return {{"interrupted", interrupted}, {"not_sent", not_sent}};
}

struct MainRun {
  std::vector<record::RequestRecord> records;  // sent requests, in completion order
  client::ClientStats stats;
  size_t not_sent = 0;  // left unsent after Ctrl-C, a stop rule or the end of --duration
  bool interrupted = false;
  StopOutcome stop;               // the stop rule that ended the run, if any
  nlohmann::json server_metrics;  // scraped during the run (run_server_metrics.h); null if off
  std::optional<server_metrics::SpecDecodeStats> spec_decode;  // from those scrapes
  std::optional<report::ProbeStats> probes;                    // --probe-request-rate
  std::vector<report::RpsChangeEvent> rps_change_events;       // with a ramp-up (run_ramp_up.h)
  nlohmann::json ramp_up;  // servebench's "ramp_up"; null if none
};

MainRun run_main(const RunConfig& c, const client::Endpoint& ep, const client::BodyOptions& body,
                 const std::vector<client::PlannedRequest>& plan, const client::RunOptions& options,
                 const tokenizer::Tokenizer& tok, RecordsFile& records_file,
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

  MainRun m;
  m.records.reserve(plan.size());
  StopRules stop_rules(c.limits, &g_stop);
  ServerMetricsRecorder server_metrics(scrape);
  server_metrics.start();
  if (c.probe_request_rate > 0) {
    std::printf("Probe request rate: %s req/s\n", python_float(c.probe_request_rate).c_str());
    std::fflush(stdout);
  }
  ProbeLoop probes(c.probe_request_rate, ep, body, options, tok);
  probes.start();
  ProgressBar bar(plan.size(), !c.disable_tqdm && !g_stop.load());
  const client::RunOptions writing_records = records_file.flushing(options);
  m.stats = client::run(ep, body, plan, writing_records, tok, [&](record::RequestRecord&& r) {
    // Stopped before it was sent (Ctrl-C, a stop rule, the end of --duration): not part of
    // the run.
    if (r.sent_ns < 0 && (g_stop.load() || c.limits.duration_s > 0)) {
      ++m.not_sent;
      return;
    }
    stop_rules.observe(r);
    records_file.append(r);
    m.records.push_back(std::move(r));
    bar.update();
    if (c.coordination) c.coordination->on_record();  // several targets' combined bar
  });
  records_file.flush();
  bar.close();
  m.probes = probes.stop();
  m.server_metrics = server_metrics.stop(m.stats.t0_mono_ns, c.save_detailed);
  m.spec_decode = server_metrics.spec_decode();
  if (c.ramp_up) {
    m.rps_change_events =
        rps_change_events(*c.ramp_up, plan, core::wall_ns_at_mono(m.stats.t0_mono_ns));
    m.ramp_up = ramp_up_json(*c.ramp_up, plan);
  }
  m.interrupted = g_interrupts.load() > 0;
  m.stop = stop_rules.outcome();
  if (stop_rules.tripped() && !m.interrupted) g_stop.store(false);  // a sweep goes on
  if (m.interrupted) {
    std::fprintf(stderr,
                 "servebench: interrupted: %zu of %zu requests were sent; the summary covers "
                 "those\n",
                 m.records.size(), plan.size());
  }
  return m;
}

// Which dataset the run used, for the result JSON's "servebench" section (vLLM's own keys do
// not name it). Every file dataset reads the same --dataset-path.
nlohmann::json dataset_json(const RunConfig& c) {
  const std::string& path = c.dataset.trace.path;
  nlohmann::json j = {{"name", c.dataset.name},
                      {"path", path.empty() ? nlohmann::json(nullptr) : nlohmann::json(path)}};
  if (c.self_timed) j["trace_time_scale"] = c.trace_time_scale;
  if (c.dataset.name == "random") j["token_rule"] = token_rule_name(c.dataset.random.token_rule);
  if (c.dataset.sharegpt.multi_turn) {
    j["multi_turn"] = {{"conversations", c.num_conversations},
                       {"max_turns", c.dataset.sharegpt.max_turns},
                       {"max_active_conversations", c.max_active_conversations > 0
                                                        ? nlohmann::json(c.max_active_conversations)
                                                        : nlohmann::json(nullptr)}};
  }
  return j;
}

// The run's arguments under vLLM's argparse names (headers left out: they may hold secrets).
nlohmann::json args_json(const RunConfig& c, const Target& t) {
  auto number_or_inf = [](double v) {
    return std::isinf(v) ? nlohmann::json("inf") : nlohmann::json(v);
  };
  // vLLM's args hold the ramp-up flags always (None when not given).
  nlohmann::json ramp_strategy, ramp_start, ramp_end;
  if (c.ramp_up) {
    ramp_strategy = schedule::ramp_up_strategy_name(c.ramp_up->strategy);
    ramp_start = c.ramp_up->start_rps;
    ramp_end = c.ramp_up->end_rps;
  }
  return {{"backend", c.backend},
          {"base_url",
           c.embedded ? nlohmann::json(nullptr) : nlohmann::json(url_for_messages(c.base_url))},
          {"endpoint", c.endpoint},
          {"model", t.model_id},
          {"served_model_name", t.endpoint.model},
          {"dataset_name", c.dataset.name},
          {"dataset_path", dataset_json(c)["path"]},
          {"num_prompts", c.num_prompts_requested},
          {"random_input_len", c.dataset.random.input_len},
          {"random_output_len", c.dataset.random.output_len},
          {"random_range_ratio", c.dataset.random.range_ratio},
          {"random_prefix_len", c.dataset.random.prefix_len},
          {"request_rate", number_or_inf(c.request_rate)},
          {"burstiness", number_or_inf(c.burstiness)},
          {"max_concurrency",
           c.max_concurrency > 0 ? nlohmann::json(c.max_concurrency) : nlohmann::json(nullptr)},
          {"ramp_up_strategy", ramp_strategy},
          {"ramp_up_start_rps", ramp_start},
          {"ramp_up_end_rps", ramp_end},
          {"seed", c.seed},
          {"num_warmups", c.num_warmups},
          {"ignore_eos", c.ignore_eos}};
}

report::RunInfo run_info(const RunConfig& c, const Target& target, const std::string& date,
                         const MainRun& m) {
  const client::ClientStats& stats = m.stats;
  report::RunInfo info;
  info.backend = c.backend;
  info.label = c.label;
  info.model_id = target.model_id;
  info.tokenizer_id = target.tokenizer_id;
  info.num_prompts = c.num_prompts_requested;
  info.spec_decode = m.spec_decode;
  info.probes = m.probes;
  info.request_rate = c.request_rate;
  info.burstiness = c.burstiness;
  info.max_concurrency = c.max_concurrency;
  if (c.ramp_up) {
    info.ramp_up_strategy = schedule::ramp_up_strategy_name(c.ramp_up->strategy);
    info.ramp_up_start_rps = c.ramp_up->start_rps;
    info.ramp_up_end_rps = c.ramp_up->end_rps;
    info.rps_change_events = m.rps_change_events;
  }
  info.date = date;
  for (const auto& [k, v] : c.metadata) info.metadata[k] = v;
  info.percentile_metrics = c.percentile_metrics;
  info.goodput_slo_ms = c.goodput_slo_ms;
  report::ClientHealth health;
  health.cpu_user_s = stats.cpu_user_s;
  health.cpu_system_s = stats.cpu_system_s;
  health.max_loop_lag_ns = stats.max_loop_lag_ns;
  health.bytes_received = stats.bytes_received;
  health.sse_events = stats.sse_events;
  health.connections_opened = stats.connections_opened;
  health.t0_mono_ns = stats.t0_mono_ns;
  health.transport = stats.transport;
  health.arrival_clock = stats.arrival_clock;
  health.kernel_stamped_reads = stats.kernel_stamped_reads;
  health.reads_stamped_at_read = stats.reads_stamped_at_read;
  health.read_delay_p50_ns = stats.read_delay_p50_ns;
  health.read_delay_p99_ns = stats.read_delay_p99_ns;
  health.read_delay_p999_ns = stats.read_delay_p999_ns;
  health.read_delay_max_ns = stats.read_delay_max_ns;
  info.client_health = health;
  return info;
}

// Prints the run's console blocks, saves its result when asked, and returns the result.
nlohmann::json report_and_save(const RunConfig& c, const Target& target, const std::string& date,
                               const Paths& paths, const MainRun& m) {
  print_failures(m.records);
  metrics::Options mo;
  mo.percentiles = c.percentiles;
  mo.goodput_slo_ms = c.goodput_slo_ms;
  mo.requested_rate = c.request_rate;
  // Warmup/cooldown windows (run_profiles.cpp) leave records out of the metrics.
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
  if (!m.server_metrics.is_null())
    std::fputs(report::server_metrics_console_block(m.server_metrics).c_str(), stdout);
  std::fflush(stdout);
  nlohmann::json result = report::vllm_result_json(summary, info, measured, c.save_detailed);
  nlohmann::json& ours = result["servebench"];
  if (!ours.contains("client")) ours["client"] = nlohmann::json::object();
  ours["client"].update(run_state_json(m.interrupted, m.not_sent));
  if (!paths.records.empty()) ours["records_file"] = paths.records;
  if (!paths.result.empty()) ours["result_file"] = paths.result;
  ours["dataset"] = dataset_json(c);
  if (!m.server_metrics.is_null()) ours["server_metrics"] = m.server_metrics;
  if (c.stage_index >= 0) ours["stage"] = stage_json(c);
  if (!m.ramp_up.is_null()) ours["ramp_up"] = m.ramp_up;
  if (c.coordination) ours["target"] = target_json(c);
  ours["load"] = load_json(c, trimmed, m.stop, ended_by_duration(c, m.records, m.not_sent));
  if (paths.result.empty()) return result;
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
  return result;
}

// After a sweep, its runs side by side: seed 004's table when the concurrency varied, else
// vLLM's serving table (seed 000).
void print_sweep_summary(const RunConfig& c, std::vector<report::RunResult> runs) {
  if (runs.size() < 2) return;
  std::printf("\n%s\n", std::string(50, '=').c_str());
  std::printf("Sweep: %zu runs\n", runs.size());
  if (c.limits.profile != LoadProfile::kNone) {
    std::fputs(report::guidellm_tables(runs).c_str(), stdout);  // GuideLLM's tables (seed 003)
  } else if (!c.stages.empty()) {
    std::fputs(report::inference_perf_stages_markdown(runs).c_str(), stdout);  // seed 003
  } else if (c.max_concurrencies.size() > 1 && c.request_rates.size() == 1) {
    std::fputs(report::concurrency_markdown(runs).c_str(), stdout);
  } else {
    std::fputs(report::vllm_serving_markdown(runs, report::MarkdownStyle::kAligned).c_str(),
               stdout);
  }
  std::fflush(stdout);
}

// A sweep run's row name: what varies ("qps_4", "concurrency_16", "qps_4_concurrency_16").
std::string sweep_point_name(const RunConfig& c) {
  if (c.stage_index >= 0) return stage_name(c.stage_index);  // inference-perf's "stage_0", …
  std::string name;
  if (c.request_rates.size() > 1) name = "qps_" + python_float(c.request_rate);
  if (c.max_concurrencies.size() > 1)
    name +=
        (name.empty() ? "" : "_") + std::string("concurrency_") + std::to_string(c.max_concurrency);
  return name;
}

}  // namespace

int execute_run(RunConfig c) {
  if (runs_several_targets(c)) return run_targets(c);  // one execute_run per target
  RunTokenizer run_tok = tokenizer_for(c.tokenizer, c.model);
  const std::shared_ptr<const tokenizer::Tokenizer>& tok = run_tok.tok;
  const std::string date = core::wall_timestamp_compact();
  Target target = resolve_target(c, tok);
  // Against a server that named its model itself, that model's tokenizer, as vLLM does.
  if (c.tokenizer.empty() && c.model.empty() && !c.embedded)
    run_tok = tokenizer_for("", target.model_id);
  target.tokenizer_id = run_tok.id;
  const std::vector<dataset::Prompt> prompts = make_prompts(c, *tok);
  // Some datasets yield fewer prompts than --num-prompts (a short trace, --no-oversample,
  // prefix_repetition's whole groups): the run, its warmups and its results count those.
  c.num_prompts_requested = c.num_prompts;
  c.num_prompts = static_cast<int>(prompts.size());
  c.num_conversations =
      static_cast<int>(std::count_if(prompts.begin(), prompts.end(), [](const dataset::Prompt& p) {
        return p.conversation >= 0 && p.turn == 0;
      }));
  if (c.request_rates.empty()) c.request_rates = {c.request_rate};
  if (c.max_concurrencies.empty()) c.max_concurrencies = {c.max_concurrency};
  if (!c.temperature_given) {
    std::printf(
        "WARNING: no --temperature given, so requests carry none and the server's default "
        "applies (vLLM's benchmark no longer sends temperature=0); add --temperature=0 for "
        "greedy decoding.\n");
  }
  initial_test_run(c, target.endpoint);
  // Which /metrics pages each run scrapes, looked for once (run_server_metrics.h).
  const std::optional<server_metrics::SamplerOptions> scrape =
      server_metrics_options(c, target.endpoint);

  client::BodyOptions body;
  body.ignore_eos = c.ignore_eos;
  body.extra_body_json = c.extra_body_json;
  body.request_id_prefix = c.request_id_prefix;
  SigintHandler sigint(!c.coordination || c.coordination->index == 0);
  std::vector<report::RunResult> sweep;
  // vLLM's rate × concurrency lists, or a GuideLLM profile's benchmarks (run_profiles.cpp).
  BenchmarkSequence benchmarks(c);
  for (std::optional<RunConfig> next; (next = benchmarks.next(sweep));) {
    RunConfig& point = *next;
    if (!c.stages.empty()) enter_stage(point, sweep.size(), target.model_id, date);
    const Paths paths = output_paths(point, target.model_id, date);
    const std::vector<client::PlannedRequest> plan = make_plan(point, prompts);
    RecordsFile records_file(paths.records, paths.records_flag);
    client::RunOptions options;
    options.max_concurrency = point.max_concurrency;
    options.max_active_conversations = point.max_active_conversations;
    options.io_threads = point.io_threads;
    options.http_engine = point.http_engine;
    options.kernel_arrival_times = point.kernel_arrival_times;
    options.stop = &g_stop;
    options.drain_timeout_s = point.drain_timeout_s;
    options.max_duration_s = point.limits.duration_s;

    warn_if_too_few_files(point);
    run_warmups(point, target.endpoint, body, plan.front(), options, *tok, records_file);
    if (point.coordination) {  // several targets: the main run's t0 is common (run_targets.cpp)
      options.t0_gate = [&point, &plan] { return point.coordination->start_gate(plan.size()); };
    }
    // The result's "date" is when this benchmark started (a sweep's files share `date`).
    const std::string started = core::wall_timestamp_compact();
    MainRun main_run =
        run_main(point, target.endpoint, body, plan, options, *tok, records_file, scrape);
    if (point.coordination) point.coordination->before_report(point.base_url);
    nlohmann::json result = report_and_save(point, target, started, paths, main_run);
    if (point.coordination) point.coordination->after_report(result);
    if (main_run.interrupted) return 130;  // the runs not started are not part of the sweep
    sweep.push_back(report::RunResult{.source = paths.result,
                                      .format = "servebench",
                                      .test_name = point.limits.benchmark.empty()
                                                       ? sweep_point_name(point)
                                                       : point.limits.benchmark,
                                      .result = std::move(result)});
    pause_between_stages(c, sweep.size(), g_stop);  // --stages: inference-perf's load.interval
  }
  print_sweep_summary(c, std::move(sweep));
  return 0;
}

}  // namespace servebench::cli::run
