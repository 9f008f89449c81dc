// `servebench latency`: vLLM's `vllm bench latency` (vllm/benchmarks/latency.py) against a
// server. Its flags (vLLM's names) become a run::LatencySpec, which the run part carries out
// (run/kinds.h): --batch-size prompts sent at once per iteration, --num-iters-warmup untimed
// iterations, then --num-iters timed. Every other flag is `servebench run`'s: the batch's spec is
// made from them once (run_flags.h). docs/run.md ("Latency and throughput tests").
#include <CLI/CLI.hpp>
#include <cmath>
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

struct LatencyFlags {
  std::string input_len = "32", output_len = "128", batch_size = "8";
  std::string num_iters_warmup = "10", num_iters = "30", output_json;
  std::vector<std::string> metadata;
  bench::EngineOnlySettings engine_only;
};

struct LatencyPlan {
  int64_t input_len, output_len, batch_size, warmups, iters;
  std::vector<std::string> pass_through;  // `servebench run` flags
};

LatencyPlan validate(const LatencyFlags& f, const std::vector<std::string>& extras) {
  LatencyPlan p;
  p.input_len = parse_int("--input-len", f.input_len, 1, 1 << 24);
  p.output_len = parse_int("--output-len", f.output_len, 1, 1 << 24);
  p.batch_size = parse_int("--batch-size", f.batch_size, 1, 1 << 20);
  p.warmups = parse_int("--num-iters-warmup", f.num_iters_warmup, 0, 1 << 20);
  p.iters = parse_int("--num-iters", f.num_iters, 1, 1 << 20);
  f.engine_only.check();
  bench::check_pass_through(extras, "latency");
  p.pass_through = extras;
  return p;
}

// The `servebench run` arguments of one iteration (vLLM's SamplingParams: temperature 1.0,
// top_p 1.0, ignore_eos, max_tokens = output_len; random prompts of input_len tokens).
std::vector<std::string> iteration_args(const LatencyPlan& p, const std::string& dir,
                                        const std::string& file) {
  std::vector<std::string> args = p.pass_through;
  args.insert(
      args.end(),
      {"--dataset-name", "random", "--random-input-len", std::to_string(p.input_len),
       "--random-output-len", std::to_string(p.output_len), "--random-range-ratio", "0",
       "--num-prompts", std::to_string(p.batch_size), "--request-rate", "inf", "--ignore-eos",
       "--disable-tqdm", "--save-result", "--result-dir", dir, "--result-filename", file});
  if (!bench::has_flag(p.pass_through, "--temperature")) {
    args.insert(args.end(), {"--temperature", "1.0"});
  }
  if (!bench::has_flag(p.pass_through, "--top-p")) args.insert(args.end(), {"--top-p", "1.0"});
  return args;
}

}  // namespace

std::function<run::LatencySpec()> add_latency_flags(CLI::App& app, bool check_only) {
  CLI::App* sub = bench::add_kind_subcommand(
      app, "latency",
      "vLLM's `bench latency` against a server: a batch of --batch-size requests sent at once, "
      "timed over --num-iters iterations; other flags are `servebench run`'s (target, model, "
      "simulator) (docs/run.md)");
  auto f = std::make_shared<LatencyFlags>();
  auto opt = [&](const std::string& name, std::string& target, const std::string& help) {
    bench::add_vllm_option(*sub, name, target, help);
  };
  opt("--input-len", f->input_len, "prompt tokens per request");
  opt("--output-len", f->output_len, "output tokens per request (ignore_eos)");
  opt("--batch-size", f->batch_size, "requests per iteration, sent at once");
  f->engine_only.add_n(*sub);
  opt("--num-iters-warmup", f->num_iters_warmup, "untimed iterations first");
  opt("--num-iters", f->num_iters, "timed iterations");
  opt("--output-json", f->output_json,
      "save vLLM's latency JSON here (and each run's result in <stem>.runs/)");
  bench::add_metadata_option(*sub, f->metadata);
  for (const char* name : {"--use-beam-search", "--profile", "--disable-detokenize"})
    f->engine_only.add_switch(*sub, name);
  return [f, sub, check_only]() -> run::LatencySpec {
    const LatencyPlan plan = validate(*f, sub->remaining());
    run::LatencySpec spec;
    spec.metadata = parse_pairs("--metadata", f->metadata, '=');
    const std::string dir = bench::runs_dir(f->output_json);
    if (check_only && !f->output_json.empty()) run::check_output_json(f->output_json, dir, true);
    // The run flags are checked before the first iteration, so a typo costs nothing.
    spec.batch =
        run_spec_from_args(iteration_args(plan, dir, check_only ? "x.json" : "check.json"));
    spec.batch_size = plan.batch_size;
    spec.input_len = plan.input_len;
    spec.output_len = plan.output_len;
    spec.warmups = plan.warmups;
    spec.iters = plan.iters;
    spec.output_json = f->output_json;
    return spec;
  };
}

Action add_latency_command(CLI::App& app) {
  std::function<run::LatencySpec()> make_spec = add_latency_flags(app, false);
  return [make_spec]() -> int { return run::execute_latency(make_spec()); };
}

}  // namespace servebench::cli
