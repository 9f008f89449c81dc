// File: run/point_setup.h
// What every point of a run shares, set up once before the first (vLLM's order: tokenizer,
// target and model, prompts, the initial test request), and the checks before each point.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/client.h"
#include "dataset/dataset.h"
#include "run/run.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::run {

struct ServerModel {
  std::string id;    // data[0].id  (vLLM's "model name", sent in requests)
  std::string root;  // data[0].root, or id when absent (vLLM's "model id")
};
// GET {base_url}/v1/models and the first entry, as vLLM does without --model. Throws
// core::Error (network) naming the URL when the server cannot be reached or lists no model.
ServerModel first_server_model(const std::string& base_url, const std::vector<std::string>& headers,
                               const std::string& api_key, bool insecure,
                               const std::string& ca_file, double timeout_s);

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
RunTokenizer tokenizer_for(const std::string& spec, const std::string& model);

// Starts the embedded simulator (setting c.base_url) or asks the server for its model; the
// endpoint every request goes to.
Target resolve_target(Spec& c, const std::shared_ptr<const tokenizer::Tokenizer>& tok);

// The dataset's prompts (its notes on stderr); `numpy_words_drawn`, when given, receives how many
// words the dataset drew from numpy's global generator (Spec::numpy_words_drawn).
std::vector<dataset::Prompt> make_prompts(const Spec& c, const tokenizer::Tokenizer& tok,
                                          uint64_t* numpy_words_drawn = nullptr);

// vLLM's initial single prompt test run (retried for --ready-check-timeout-sec).
void initial_test_run(const Spec& c, const client::Endpoint& endpoint);

// Every request in flight holds a socket (two with the embedded simulator, which serves from
// the same process). Past the open-files limit, requests fail with "Couldn't connect": say so
// before the run rather than leave the user to guess from the failures. Called first thing in
// run::execute (before the tokenizer, the dataset, any output file), for the largest
// concurrency of the run: the embedded simulator's refusal costs no set-up.
void warn_if_too_few_files(const Spec& c);

}  // namespace servebench::run
