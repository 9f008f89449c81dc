// vLLM's `bench latency` (vllm/benchmarks/latency.py) against a server (kinds.h). vLLM times one
// batch of --batch-size prompts of --input-len tokens, each generating --output-len tokens
// (ignore_eos), through its offline engine, --num-iters-warmup times untimed and then
// --num-iters times, and reports the iterations' mean, std and percentiles (10, 25, 50, 75, 90,
// 99). Here each iteration is one run of the batch spec: the batch sent at once (request rate
// inf), its latency the run's duration (first send to last response).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "metrics/metrics.h"
#include "run/kind_runs.h"
#include "run/kinds.h"
#include "run/names.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

struct Iteration {
  double latency_s = 0;
  nlohmann::json summary;  // for the result's "servebench" section
};

// One batch: returns its latency, or throws naming the iteration when it could not be measured.
// keep: the run's files are kept (there is an --output-json).
Iteration run_iteration(const LatencySpec& p, bool keep, const std::string& name, int* exit_code) {
  const std::string& dir = p.batch.result_dir;
  const std::string file = name + ".json";
  Spec spec = p.batch;
  spec.result_filename = file;
  *exit_code = execute_muted(std::move(spec));
  if (*exit_code != 0) return {};
  const std::string path = (fs::path(dir) / file).string();
  const nlohmann::json r = read_result(path);
  const int64_t failed = r.value("failed", int64_t{0});
  if (failed > 0) {
    // A batch with failures has no batch latency.
    const std::string more =
        show_failures(records_path(dir, file), "Failed requests in " + name, keep);
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

}  // namespace

int execute_latency(const LatencySpec& p) {
  const std::string& dir = p.batch.result_dir;
  const bool keep_runs = !p.output_json.empty();
  if (!p.output_json.empty()) check_output_json(p.output_json, dir, false);
  const RunsDirCleanup cleanup(dir, keep_runs);
  std::printf(
      "Batch of %lld requests (input %lld, output %lld tokens) sent at once per iteration%s\n",
      static_cast<long long>(p.batch_size), static_cast<long long>(p.input_len),
      static_cast<long long>(p.output_len),
      keep_runs ? (", each run's result in " + dir + "/").c_str() : "");
  std::printf("Warming up...\n");
  std::fflush(stdout);
  int code = 0;
  for (int64_t i = 0; i < p.warmups; ++i) {
    const Iteration it = run_iteration(p, keep_runs, fmt::format("warmup_{:03}", i + 1), &code);
    if (code != 0) return code;
    std::printf("Warmup iteration %lld/%lld: %s s\n", static_cast<long long>(i + 1),
                static_cast<long long>(p.warmups), python_float(it.latency_s).c_str());
    std::fflush(stdout);
  }
  std::vector<double> latencies;
  nlohmann::json iterations = nlohmann::json::array();
  for (int64_t i = 0; i < p.iters; ++i) {
    Iteration it = run_iteration(p, keep_runs, fmt::format("iter_{:03}", i + 1), &code);
    if (code != 0) return code;
    std::printf("Bench iteration %lld/%lld: %s s\n", static_cast<long long>(i + 1),
                static_cast<long long>(p.iters), python_float(it.latency_s).c_str());
    std::fflush(stdout);
    latencies.push_back(it.latency_s);
    iterations.push_back(std::move(it.summary));
  }
  // numpy's mean, population std and linear percentiles, as latency.py.
  const std::vector<double> kPercentages = {10, 25, 50, 75, 90, 99};
  const metrics::Distribution d = metrics::summarize(latencies, kPercentages);
  std::printf("Avg latency: %s seconds\n", python_float(d.mean).c_str());
  std::printf("Std latency: %s seconds\n", python_float(d.std).c_str());
  nlohmann::json percentiles = nlohmann::json::object();
  for (const auto& [pct, value] : d.percentiles) {
    const std::string key = std::to_string(static_cast<int>(pct));
    std::printf("%s%% percentile latency: %s seconds\n", key.c_str(), python_float(value).c_str());
    percentiles[key] = value;
  }
  std::fflush(stdout);
  if (!keep_runs) return 0;
  nlohmann::json result = {{"avg_latency", d.mean},
                           {"std_latency", d.std},
                           {"latencies", latencies},
                           {"percentiles", percentiles}};
  add_metadata(result, p.metadata);
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
  write_json(p.output_json, result, "--output-json");
  return 0;
}

}  // namespace servebench::run
