#include "run/point_setup.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/system.h"
#include "run/names.h"

namespace servebench::run {

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

Target resolve_target(Spec& c, const std::shared_ptr<const tokenizer::Tokenizer>& tok) {
  Target t;
  std::string served = c.served_model_name;
  if (c.deployment) {
    // Started by execute: every frontend serves the model name it was given.
    t.model_id = c.model.empty() ? "servebench-sim" : c.model;
    if (served.empty()) served = t.model_id;
  } else if (c.embedded) {
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
    client::Endpoint lookup;
    lookup.ca_file = c.ca_file;
    ServerModel m =
        first_server_model(c.base_url, c.headers, c.api_key, c.insecure,
                           client::ca_file_for(lookup), std::max(10.0, c.ready_check_timeout_s));
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
  t.endpoint.ca_file = c.ca_file;
  return t;
}

std::vector<dataset::Prompt> make_prompts(const Spec& c, const tokenizer::Tokenizer& tok,
                                          uint64_t* numpy_words_drawn) {
  dataset::DatasetReport report;
  auto prompts = dataset::make_prompts(static_cast<size_t>(c.num_prompts), c.dataset, tok, &report);
  if (numpy_words_drawn) *numpy_words_drawn = report.numpy_global_words;
  for (const std::string& note : report.notes) {
    std::fprintf(stderr, "servebench: %s dataset: %s\n", c.dataset.name.c_str(), note.c_str());
  }
  return prompts;
}

void warn_if_too_few_files(const Spec& c) {
  const uint64_t limit = core::raise_open_files_limit();
  // The largest concurrency of the run (a sweep's list), checked before any set-up.
  int concurrency = c.max_concurrency;
  for (int listed : c.max_concurrencies) {
    if (listed <= 0 || concurrency <= 0) {
      concurrency = 0;  // none: every prompt may be in flight
      break;
    }
    concurrency = std::max(concurrency, listed);
  }
  const uint64_t in_flight =
      static_cast<uint64_t>(concurrency > 0 ? std::min(concurrency, c.num_prompts) : c.num_prompts);
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
  // Said once per run, not again before each point (targets check from their own threads).
  static std::atomic<uint64_t> warned_in_flight{0};
  if (warned_in_flight.exchange(in_flight) == in_flight) return;
  std::fprintf(stderr,
               "servebench: warning: up to %llu requests may be in flight, but the open-files "
               "limit is %llu (ulimit -n): requests past it fail to connect. Raise the hard "
               "limit, or cap them with --max-concurrency.\n",
               static_cast<unsigned long long>(in_flight), static_cast<unsigned long long>(limit));
}

void initial_test_run(const Spec& c, const client::Endpoint& endpoint) {
  std::printf("Starting initial single prompt test run...\n");
  std::fflush(stdout);
  try {
    client::wait_until_ready(endpoint, c.ready_check_timeout_s);
  } catch (const core::Interrupted&) {
    throw;  // names its phase itself; the exit code is the signal's
  } catch (const core::Error& e) {
    throw core::Error(e.kind(), "initial test run",
                      std::string(e.what()) + " (url " + url_for_messages(endpoint.url) + ")");
  }
  std::printf("Initial test run completed.\n");
}

}  // namespace servebench::run
