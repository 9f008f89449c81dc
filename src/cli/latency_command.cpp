// `servebench latency`: vLLM's `vllm bench latency` (vllm/benchmarks/latency.py) against a
// server. vLLM times one batch of --batch-size prompts of --input-len tokens, each generating
// --output-len tokens (ignore_eos), through its offline engine, --num-iters-warmup times
// untimed and then --num-iters times, and reports the iterations' mean, std and percentiles
// (10, 25, 50, 75, 90, 99). Here each iteration is one `servebench run` in this process: the
// batch sent at once (request rate inf) to the server (or the embedded simulator), its latency
// the run's duration (first send to last response). Every other flag is `servebench run`'s: the
// iterations' spec is made from them once (run_flags.h).
// docs/run.md ("Latency and throughput tests") has the details.
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
#include "metrics/metrics.h"
#include "run/names.h"

namespace servebench::cli {
namespace {

namespace fs = std::filesystem;

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

struct Iteration {
  double latency_s = 0;
  nlohmann::json summary;  // for the result's "servebench" section
};

// One batch: returns its latency, or throws naming the iteration when it could not be measured.
// keep: the run's files are kept (there is an --output-json). `batch`: the iterations' spec.
Iteration run_iteration(const LatencyPlan& p, const run::Spec& batch, const std::string& dir,
                        bool keep, const std::string& name, int* exit_code) {
  const std::string file = name + ".json";
  run::Spec spec = batch;
  spec.result_filename = file;
  *exit_code = bench::execute_muted(std::move(spec));
  if (*exit_code != 0) return {};
  const std::string path = (fs::path(dir) / file).string();
  const nlohmann::json r = bench::read_result(path);
  const int64_t failed = r.value("failed", int64_t{0});
  if (failed > 0) {
    // A batch with failures has no batch latency.
    const std::string more =
        bench::show_failures(bench::records_path(dir, file), "Failed requests in " + name, keep);
    throw core::Error(core::ErrorKind::kNetwork, name,
                      fmt::format("{} of {} requests failed{}", failed, p.batch_size, more));
  }
  Iteration it;
  it.latency_s = r["duration"].get<double>();
  it.summary = {{"latency_s", it.latency_s},
                {"completed", r.value("completed", 0)},
                {"mean_ttft_ms", r.value("mean_ttft_ms", nlohmann::json(nullptr))},
                {"mean_tpot_ms", r.value("mean_tpot_ms", nlohmann::json(nullptr))},
                {"result", path}};
  return it;
}

int run_latency(const LatencyFlags& f, const LatencyPlan& p) {
  const std::string dir = bench::runs_dir(f.output_json);
  // The run flags are checked before the first iteration, so a typo costs nothing.
  const run::Spec batch = run_spec_from_args(iteration_args(p, dir, "check.json"));
  const bool keep_runs = !f.output_json.empty();
  if (keep_runs) bench::check_output_json(f.output_json, false);
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) fs::remove_all(dir, ec);
    }
  } cleanup{dir, keep_runs};
  std::printf(
      "Batch of %lld requests (input %lld, output %lld tokens) sent at once per iteration%s\n",
      static_cast<long long>(p.batch_size), static_cast<long long>(p.input_len),
      static_cast<long long>(p.output_len),
      keep_runs ? (", each run's result in " + dir + "/").c_str() : "");
  std::printf("Warming up...\n");
  std::fflush(stdout);
  int code = 0;
  for (int64_t i = 0; i < p.warmups; ++i) {
    const Iteration it =
        run_iteration(p, batch, dir, keep_runs, fmt::format("warmup_{:03}", i + 1), &code);
    if (code != 0) return code;
    std::printf("Warmup iteration %lld/%lld: %s s\n", static_cast<long long>(i + 1),
                static_cast<long long>(p.warmups), run::python_float(it.latency_s).c_str());
    std::fflush(stdout);
  }
  std::vector<double> latencies;
  nlohmann::json iterations = nlohmann::json::array();
  for (int64_t i = 0; i < p.iters; ++i) {
    Iteration it = run_iteration(p, batch, dir, keep_runs, fmt::format("iter_{:03}", i + 1), &code);
    if (code != 0) return code;
    std::printf("Bench iteration %lld/%lld: %s s\n", static_cast<long long>(i + 1),
                static_cast<long long>(p.iters), run::python_float(it.latency_s).c_str());
    std::fflush(stdout);
    latencies.push_back(it.latency_s);
    iterations.push_back(std::move(it.summary));
  }
  // numpy's mean, population std and linear percentiles, as latency.py.
  const std::vector<double> kPercentages = {10, 25, 50, 75, 90, 99};
  const metrics::Distribution d = metrics::summarize(latencies, kPercentages);
  std::printf("Avg latency: %s seconds\n", run::python_float(d.mean).c_str());
  std::printf("Std latency: %s seconds\n", run::python_float(d.std).c_str());
  nlohmann::json percentiles = nlohmann::json::object();
  for (const auto& [pct, value] : d.percentiles) {
    const std::string key = std::to_string(static_cast<int>(pct));
    std::printf("%s%% percentile latency: %s seconds\n", key.c_str(),
                run::python_float(value).c_str());
    percentiles[key] = value;
  }
  std::fflush(stdout);
  if (!keep_runs) return 0;
  nlohmann::json result = {{"avg_latency", d.mean},
                           {"std_latency", d.std},
                           {"latencies", latencies},
                           {"percentiles", percentiles}};
  bench::add_metadata(result, f.metadata);
  result["servebench"] = {{"kind", "latency"},
                          {"batch_size", p.batch_size},
                          {"input_len", p.input_len},
                          {"output_len", p.output_len},
                          {"num_iters_warmup", p.warmups},
                          {"num_iters", p.iters},
                          {"latency_definition",
                           "each iteration's batch sent at once to the server; latency = first "
                           "send to last response (the run's duration)"},
                          {"runs_dir", dir},
                          {"iterations", std::move(iterations)}};
  bench::write_json(f.output_json, result, "--output-json");
  return 0;
}

}  // namespace

Action add_latency_command(CLI::App& app, bool check_only) {
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
  return [f, sub, check_only]() -> int {
    const LatencyPlan plan = validate(*f, sub->remaining());
    if (!f->metadata.empty()) parse_pairs("--metadata", f->metadata, '=');
    if (check_only) {
      if (!f->output_json.empty()) bench::check_output_json(f->output_json, true);
      run_spec_from_args(iteration_args(plan, bench::runs_dir(f->output_json), "x.json"));
      return 0;
    }
    return run_latency(*f, plan);
  };
}

}  // namespace servebench::cli
