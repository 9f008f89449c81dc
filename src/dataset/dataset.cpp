// One entry point for every dataset (--dataset-name), and what the file datasets share.
#include "dataset/dataset.h"

#include <algorithm>
#include <cstdio>

#include "core/clock.h"
#include "core/error.h"
#include "dataset/py_random.h"
#include "dataset/sampling.h"

namespace servebench::dataset {

void fill_to_count(std::vector<Prompt>& prompts, size_t count, const FileSampling& sampling,
                   const std::string& what, DatasetReport& report) {
  report.usable = prompts.size();
  if (prompts.empty()) {
    throw core::Error(
        core::ErrorKind::kInput, sampling.path,
        "no usable rows: " + std::to_string(report.rows) + " read, none of them " + what);
  }
  if (prompts.size() >= count) return;
  const size_t found = prompts.size();
  std::string note = "only " + std::to_string(found) + " of " + std::to_string(report.rows) +
                     " rows in " + sampling.path + " are " + what + " (" + std::to_string(count) +
                     " prompts asked for)";
  if (!sampling.oversample) {
    report.notes.push_back(note + "; sending " + std::to_string(found) + " (--no-oversample)");
    return;
  }
  // vLLM reseeds before oversampling and draws from the prompts found so far.
  PyRandom rng(sampling.seed);
  prompts.reserve(count);
  for (size_t i = found; i < count; ++i) prompts.push_back(prompts[rng.randbelow(found)]);
  report.oversampled = count - found;
  report.notes.push_back(note + "; drew " + std::to_string(report.oversampled) +
                         " of them again to reach " + std::to_string(count) +
                         " (--no-oversample to send only those found)");
}

void check_range(const char* flag, int64_t value, int64_t low, int64_t high) {
  if (value < low || value > high) {
    throw core::Error(core::ErrorKind::kUsage, flag,
                      "must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                          "], got " + std::to_string(value));
  }
}

void note_token_mismatch(DatasetReport& report) {
  if (report.token_mismatch == 0) return;
  report.notes.push_back("across all prompts there were " +
                         std::to_string(std::abs(report.token_mismatch)) +
                         (report.token_mismatch > 0 ? " more" : " fewer") +
                         " tokens than asked for after decoding and re-encoding (as vLLM warns; "
                         "token counts sent are the re-encoded ones)");
}

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> kNames = {
      "random",   "sharegpt",          "custom",
      "sonnet",   "prefix_repetition", "generated-shared-prefix",
      "mooncake", "timed_trace",       "azure_trace"};
  return kNames;
}

bool is_trace_dataset(const std::string& name) {
  return name == "mooncake" || name == "timed_trace" || name == "azure_trace";
}

std::vector<Prompt> make_prompts(size_t count, const DatasetOptions& options,
                                 const tokenizer::Tokenizer& tokenizer, DatasetReport* report) {
  DatasetReport local;
  std::vector<Prompt> prompts;
  const std::string& name = options.name;
  if (name == "random") {
    RandomReport r;
    const int64_t start_ns = core::mono_ns();
    prompts = random_prompts(count, options.random, tokenizer, &r);
    local.token_mismatch = r.token_mismatch;
    note_token_mismatch(local);
    // vLLM's rule re-encodes every prompt: with a real tokenizer that takes minutes for large
    // sets, the round-trip rule about a second (docs/performance.md, "Datasets").
    const double seconds = static_cast<double>(core::mono_ns() - start_ns) / 1e9;
    if (options.random.token_rule == RandomTokenRule::kVllm && seconds > 5) {
      char took[32];
      std::snprintf(took, sizeof took, "%.1f", seconds);
      local.notes.push_back(std::string("building the prompts took ") + took +
                            " s with vLLM's decode/re-encode rule; --random-token-rule "
                            "round-trip builds exact prompts without re-encoding");
    }
  } else if (name == "sharegpt") {
    prompts = sharegpt_prompts(count, options.sharegpt, tokenizer, &local);
  } else if (name == "custom") {
    prompts = custom_prompts(count, options.custom, tokenizer, &local);
  } else if (name == "sonnet") {
    prompts = sonnet_prompts(count, options.sonnet, tokenizer, &local);
  } else if (name == "prefix_repetition") {
    prompts = prefix_repetition_prompts(count, options.prefix_repetition, tokenizer, &local);
  } else if (name == "generated-shared-prefix") {
    prompts = shared_prefix_prompts(options.shared_prefix, tokenizer, &local);
  } else if (is_trace_dataset(name)) {
    prompts = trace_prompts(count, options.trace, tokenizer, &local);
  } else {
    throw core::Error(core::ErrorKind::kUsage, "--dataset-name", "unknown dataset '" + name + "'");
  }
  if (report) *report = std::move(local);
  return prompts;
}

}  // namespace servebench::dataset
