// `servebench throughput`: vLLM's `vllm bench throughput` (vllm/benchmarks/throughput.py)
// against a server. Its flags (vLLM's names) become a run::ThroughputSpec, which the run part
// carries out (run/kinds.h): every prompt sent at once, elapsed_time the run's duration. Every
// other flag is `servebench run`'s (run_flags.h). docs/run.md ("Latency and throughput tests").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "cli/bench_kinds.h"
#include "cli/commands.h"
#include "cli/run_flags.h"
#include "cli/values.h"
#include "core/error.h"
#include "run/kinds.h"

namespace servebench::cli {
namespace {

struct ThroughputFlags {
  std::string backend = "vllm", dataset_name = "sharegpt", dataset, dataset_path;
  std::string input_len, output_len, num_prompts = "1000", output_json;
  std::string prefix_len = "0", random_range_ratio = "0.0";
  std::vector<std::string> metadata;
  bench::EngineOnlySettings engine_only;
};

// The `servebench run` arguments of the run (vLLM's get_requests and SamplingParams: every
// prompt at once, temperature 1.0, top_p 1.0, ignore_eos).
std::vector<std::string> run_args(const ThroughputFlags& f, const std::vector<std::string>& extras,
                                  const std::string& dir) {
  f.engine_only.check();
  // vLLM's engine backends: vllm (completions) and vllm-chat; hf and mii run no server.
  std::string backend;
  if (f.backend == "vllm") {
    backend = "vllm";
  } else if (f.backend == "vllm-chat") {
    backend = "openai-chat";
  } else {
    throw core::Error(core::ErrorKind::kUsage, "--backend",
                      "'" + f.backend + "': vllm or vllm-chat against a server");
  }
  bench::check_pass_through(extras, "throughput");
  if (bench::has_flag(extras, "--backend")) {
    throw core::Error(core::ErrorKind::kUsage, "--backend", "given twice");
  }
  std::vector<std::string> args = extras;
  args.insert(args.end(), {"--backend", backend});
  const std::string path = f.dataset_path.empty() ? f.dataset : f.dataset_path;
  // vLLM: without a dataset path the random dataset, which needs --input-len.
  std::string name = f.dataset_name;
  if (path.empty() && name != "prefix_repetition") name = "random";
  args.insert(args.end(), {"--dataset-name", name});
  if (!path.empty()) args.insert(args.end(), {"--dataset-path", path});
  if (name == "random") {
    if (f.input_len.empty()) {
      throw core::Error(core::ErrorKind::kUsage, "--input-len",
                        "needed for the random dataset (no --dataset-path given)");
    }
    args.insert(args.end(), {"--random-input-len", f.input_len, "--random-output-len",
                             f.output_len.empty() ? "128" : f.output_len, "--random-range-ratio",
                             f.random_range_ratio, "--random-prefix-len", f.prefix_len});
  } else if (!f.output_len.empty()) {
    if (name != "sharegpt") {
      throw core::Error(core::ErrorKind::kUsage, "--output-len",
                        "with --dataset-name " + name + ": use that dataset's own flag");
    }
    args.insert(args.end(), {"--sharegpt-output-len", f.output_len});
  }
  args.insert(args.end(), {"--num-prompts", f.num_prompts, "--request-rate", "inf", "--ignore-eos",
                           "--save-result", "--result-dir", dir, "--result-filename", "run.json"});
  if (!bench::has_flag(extras, "--temperature")) args.insert(args.end(), {"--temperature", "1.0"});
  if (!bench::has_flag(extras, "--top-p")) args.insert(args.end(), {"--top-p", "1.0"});
  return args;
}

}  // namespace

std::function<run::ThroughputSpec()> add_throughput_flags(CLI::App& app, bool check_only) {
  CLI::App* sub = bench::add_kind_subcommand(
      app, "throughput",
      "vLLM's `bench throughput` against a server: every prompt sent at once; requests/s and "
      "tokens/s; other flags are `servebench run`'s (target, model, simulator) (docs/run.md)");
  auto f = std::make_shared<ThroughputFlags>();
  auto opt = [&](const std::string& name, std::string& target, const std::string& help) {
    bench::add_vllm_option(*sub, name, target, help);
  };
  opt("--backend", f->backend, "vllm (completions API) or vllm-chat (chat API)");
  opt("--dataset-name", f->dataset_name,
      "sharegpt, random, or another `servebench run` dataset (random without a path)");
  opt("--dataset", f->dataset, "the ShareGPT file (vLLM's older name of --dataset-path)");
  opt("--dataset-path", f->dataset_path, "the dataset file");
  opt("--input-len", f->input_len, "random dataset: prompt tokens per request");
  opt("--output-len", f->output_len, "output tokens per request (overrides the dataset's)");
  f->engine_only.add_n(*sub);
  opt("--num-prompts", f->num_prompts, "prompts, all sent at once");
  opt("--prefix-len", f->prefix_len, "random dataset: shared prefix tokens");
  opt("--random-range-ratio", f->random_range_ratio, "random dataset: length range ratio");
  opt("--output-json", f->output_json,
      "save vLLM's throughput JSON here (and the run's result in <stem>.runs/)");
  bench::add_metadata_option(*sub, f->metadata);
  for (const char* name : {"--profile", "--disable-detokenize", "--async-engine"})
    f->engine_only.add_switch(*sub, name);
  return [f, sub, check_only]() -> run::ThroughputSpec {
    const std::string dir = bench::runs_dir(f->output_json);
    const std::vector<std::string> args = run_args(*f, sub->remaining(), dir);
    std::vector<std::pair<std::string, std::string>> metadata =
        parse_pairs("--metadata", f->metadata, '=');
    if (check_only && !f->output_json.empty()) run::check_output_json(f->output_json, dir, true);
    // The run's flags first (a typo creates nothing); the output is checked before the run.
    return {run_spec_from_args(args), f->output_json, std::move(metadata)};
  };
}

Action add_throughput_command(CLI::App& app) {
  std::function<run::ThroughputSpec()> make_spec = add_throughput_flags(app, false);
  return [make_spec]() -> int { return run::execute_throughput(make_spec()); };
}

}  // namespace servebench::cli
