// SGLang's `python -m sglang.bench_serving --output-file F.jsonl` mapped onto vLLM's result keys.
// Each run appends one JSON line (sgl-project/sglang python/sglang/bench_serving.py, the
// `result` dict at the end of benchmark()): the arguments (backend, dataset_name, request_rate,
// max_concurrency, …), then duration, completed, total_input_tokens, total_output_tokens (and
// _retokenized), request/input/output throughputs, and mean/median/std/p99 of e2e_latency,
// ttft, tpot and itl in ms (later versions add p90/p95, max ITL, total_throughput); with
// --output-details the per-request arrays too. The file was forked from vLLM's
// benchmark_serving.py, so most keys are vLLM's already; E2E latency is "e2e_latency" where
// vLLM writes "e2el". docs/metrics.md says where the definitions differ.
#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "report/import_formats.h"
#include "report/text_tables.h"

namespace servebench::report::importers {
namespace {

using nlohmann::json;

// The keys the tables read as numbers, as SGLang writes them.
constexpr const char* kNumeric[] = {
    "duration",           "completed",        "total_input_tokens", "total_output_tokens",
    "request_throughput", "input_throughput", "output_throughput",  "total_throughput"};

json one_line(const json& line, const std::string& path, const std::string& where) {
  auto fail = [&](const std::string& key, const std::string& message) {
    throw core::Error(core::ErrorKind::kInput, path, where + key + ": " + message);
  };
  if (!line.contains("completed")) fail("completed", "missing: not a bench_serving result");
  for (const char* key : kNumeric) {
    if (line.contains(key) && !line[key].is_number()) fail(key, "not a number");
  }
  json out = json::object();
  static const std::regex kAggregate(R"((mean|median|std|min|max|p[0-9]+(\.[0-9]+)?)_(.+)_ms)");
  for (const auto& [key, value] : line.items()) {
    std::smatch m;
    if (!std::regex_match(key, m, kAggregate)) continue;
    if (!value.is_number()) {
      if (value.is_null()) continue;
      fail(key, "not a number");
    }
    const std::string metric = m[3].str() == "e2e_latency" ? "e2el" : m[3].str();
    out[m[1].str() + "_" + metric + "_ms"] = value;
  }
  for (const char* key : kNumeric) {
    if (line.contains(key)) out[key] = line[key];
  }
  out["completed"] = line["completed"].get<int64_t>();
  // Called total_throughput by later versions; (input + output) / duration either way.
  if (line.contains("total_throughput")) {
    out["total_token_throughput"] = line["total_throughput"];
    out.erase("total_throughput");
  } else if (line.contains("input_throughput") && line.contains("output_throughput")) {
    out["total_token_throughput"] =
        line["input_throughput"].get<double>() + line["output_throughput"].get<double>();
  }
  // Little's law over the run, sum(E2E) / duration: GuideLLM's mean concurrency.
  if (line.contains("concurrency") && line["concurrency"].is_number()) {
    out["mean_concurrency"] = line["concurrency"];
  }
  const auto rate = line.find("request_rate");
  out["request_rate"] =
      rate != line.end() && rate->is_number() && std::isfinite(rate->get<double>()) ? *rate
                                                                                    : json("inf");
  const auto concurrency = line.find("max_concurrency");
  out["max_concurrency"] =
      concurrency != line.end() && concurrency->is_number() ? *concurrency : json(nullptr);
  json source = json::object();
  for (const char* key : {"backend", "dataset_name", "total_output_tokens_retokenized",
                          "accept_length", "random_input_len", "random_output_len",
                          "random_range_ratio", "sharegpt_output_len", "tag"}) {
    if (line.contains(key)) source[key] = line[key];
  }
  out["sglang"] = std::move(source);
  out["backend"] = "sglang-bench-serving";
  return out;
}

// A sweep appended to one file: each line named by its load, as vLLM's suites name files.
std::string load_suffix(const json& out) {
  if (out["request_rate"].is_number()) {
    return "_qps_" + text::python_g(out["request_rate"].get<double>());
  }
  if (out["max_concurrency"].is_number()) {
    return "_concurrency_" + text::python_g(out["max_concurrency"].get<double>());
  }
  return "_qps_inf";
}

}  // namespace

bool is_sglang_result(const json& j) {
  return j.is_object() && j.contains("completed") &&
         (j.contains("mean_e2e_latency_ms") || j.contains("total_output_tokens_retokenized"));
}

std::vector<RunResult> sglang_runs(const std::vector<json>& lines, const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  std::vector<RunResult> runs;
  std::set<std::string> names;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = lines.size() > 1 ? "line " + std::to_string(i + 1) + ": " : "";
    RunResult run;
    run.source = path;
    run.format = "sglang";
    run.result = one_line(lines[i], path, where);
    std::string name = stem;
    if (lines.size() > 1) name += load_suffix(run.result);
    if (!names.insert(name).second) name += "_" + std::to_string(i + 1);  // a repeated load
    names.insert(name);
    run.result["test_name"] = name;
    run.test_name = name;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace servebench::report::importers
