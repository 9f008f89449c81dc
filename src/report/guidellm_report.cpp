// GuideLLM's console report (seed 003): per sweep, the "Benchmarks Metadata" block, then the
// Info and Stats tables (tables.cpp). Several sweeps (report noib/ ib/) are several blocks, each
// under a heading naming its input, as the seed lays out its No IB and IB runs.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/guidellm_layout.h"
#include "report/tables.h"
#include "report/text_tables.h"

namespace servebench::report {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const json* at_path(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* key : keys) {
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

std::string text_at(const json& j, std::initializer_list<const char*> keys) {
  const json* v = at_path(j, keys);
  if (!v || v->is_null()) return "None";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number()) return text::python_repr(v->get<double>());
  return v->dump();
}

// Which sweep a run belongs to: a GuideLLM report's file, else the directory of the result.
std::string sweep_of(const RunResult& run) {
  if (run.format == "guidellm") return run.source;
  return fs::path(run.source).parent_path().string();
}

std::string sweep_title(const std::string& sweep) {
  const fs::path p(sweep);
  const std::string name = p.has_filename() ? p.filename().string() : p.string();
  return name.empty() ? "." : name;
}

// GuideLLM's strategy type of a run: its own, a `run --profile` benchmark's, else from the load.
std::string strategy_type(const RunResult& run) {
  if (const json* t = at_path(run.result, {"guidellm", "strategy", "type_"}); t && t->is_string())
    return t->get<std::string>();
  if (const json* t = at_path(run.result, {"servebench", "load", "strategy"}); t && t->is_string())
    return t->get<std::string>();
  const auto rate = figure(run, "request_rate");
  const auto concurrency = figure(run, "max_concurrency");
  if (!rate || std::isinf(*rate)) {
    if (!concurrency) return "throughput";
    return *concurrency == 1 ? "synchronous" : "concurrent";
  }
  return figure(run, "burstiness").value_or(1.0) == 1.0 ? "poisson" : "constant";
}

// GuideLLM's "Benchmarks Metadata" block (guidellm/benchmark/output.py, print_benchmarks_metadata)
// from what the results carry; what they do not carry is None, as GuideLLM prints an unset arg.
std::string metadata_block(std::span<const RunResult> runs) {
  const RunResult& first = runs.front();
  double duration = 0;
  for (const RunResult& r : runs) duration += figure(r, "duration").value_or(0);
  std::string strategies;
  for (const RunResult& r : runs)
    strategies += (strategies.empty() ? "'" : ", '") + strategy_type(r) + "'";
  std::string profile = text_at(first.result, {"servebench", "load", "profile"});
  if (profile == "None") profile = runs.size() > 1 ? "sweep" : strategy_type(first);
  double input = 0, output = 0, completed = 0;
  for (const RunResult& r : runs) {
    const auto in = figure(r, "total_input_tokens"), out = figure(r, "total_output_tokens");
    const auto n = figure(r, "completed");
    if (!in || !out || !n) continue;
    input += *in;
    output += *out;
    completed += *n;
  }
  const std::string data = completed > 0
                               ? fmt::format("'prompt_tokens={:.0f},output_tokens={:.0f}'",
                                             input / completed, output / completed)
                               : std::string("None");
  // A string as Python's repr shows it in GuideLLM's block, or None.
  auto quoted = [&first](std::initializer_list<const char*> keys) {
    const std::string v = text_at(first.result, keys);
    return v == "None" ? v : "'" + v + "'";
  };
  std::string out = "Benchmarks Metadata:\n";
  out += "    Run id:" + text_at(first.result, {"guidellm", "run_id"}) + "\n";
  out += fmt::format("    Duration:{:.1f} seconds\n", duration);
  out += "    Profile:type=" + profile + ", strategies=[" + strategies +
         "], max_concurrency=None\n";  // the sweep's own limit: servebench has none
  out += "    Args:max_number=" + text_at(first.result, {"servebench", "load", "max_requests"}) +
         ", max_duration=" + text_at(first.result, {"servebench", "load", "duration_s"}) + "\n";
  out += "    Worker:backend_type=" + quoted({"backend"}) +
         " backend_target=" + quoted({"base_url"}) + " backend_model=" + quoted({"model_id"}) +
         "\n";
  out += "    Request Loader:data=" + data + " processor=" + quoted({"tokenizer_id"}) + "\n";
  out += "    Extras:tag=" + quoted({"label"}) + ", metadata={'gpu_type': " + quoted({"gpu_type"}) +
         "}\n";
  return out;
}

}  // namespace

std::string guidellm_tables(std::span<const RunResult> runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<RunResult>> sweeps;
  for (const RunResult& r : runs) {
    const std::string sweep = sweep_of(r);
    if (!sweeps.count(sweep)) order.push_back(sweep);
    sweeps[sweep].push_back(r);
  }
  std::string out;
  for (const std::string& sweep : order) {
    if (order.size() > 1) out += (out.empty() ? "" : "\n") + ("### " + sweep_title(sweep)) + "\n\n";
    const std::vector<RunResult>& group = sweeps[sweep];
    if (!group.empty()) out += metadata_block(group) + "\n";
    out += guidellm_info_stats(group);
  }
  // GuideLLM's tables have no room for intervals: repeated runs get their own table after them.
  const std::string repeats = repeats_markdown(runs);
  return repeats.empty() ? out : out + "\n" + repeats;
}

}  // namespace servebench::report
