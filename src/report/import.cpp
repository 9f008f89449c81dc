// Reading results back in. A result file is told by its keys: vLLM's `--save-result` object has
// "completed" and "request_throughput" (vllm/benchmarks/serve.py), servebench's adds a
// "servebench" object; `vllm bench latency --output-json` has "avg_latency", "latencies" and
// "percentiles" (vllm/benchmarks/latency.py), `vllm bench throughput` has "elapsed_time",
// "requests_per_second" and "tokens_per_second" (vllm/benchmarks/throughput.py), and
// `servebench latency` / `throughput` write the same keys. GuideLLM's report
// ({"benchmarks": [...]}) and inference-perf's lifecycle reports ("load_summary", "successes",
// "failures") are mapped onto vLLM's keys by import_guidellm.cpp and import_inference_perf.cpp.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/json_text.h"
#include "metrics/metrics.h"
#include "report/import_formats.h"
#include "report/tables.h"

namespace servebench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

[[noreturn]] void bad_input(const std::string& path, const std::string& message) {
  throw core::Error(core::ErrorKind::kInput, path, message);
}

// Python's json.dump writes Infinity, -Infinity and NaN for such floats (vLLM's burstiness may be
// inf); JSON has no such tokens, so outside strings they become "inf", "-inf" and null.
std::string python_tokens_to_json(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (text.compare(i, 9, "-Infinity") == 0) {
      out += "\"-inf\"";
      i += 8;
      continue;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "\"inf\"";
      i += 7;
      continue;
    } else if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

// nlohmann's message less its own "[json.exception.parse_error.101] " tag.
std::string json_message(const json::exception& e) {
  std::string what = e.what();
  const size_t tag_end = what.find("] ");
  return tag_end == std::string::npos ? what : what.substr(tag_end + 2);
}

// Where in `text` parsing stops ("benchmarks[2].metrics"), found by parsing it again with a
// callback that follows the keys; empty at the top level. Only run after a failure, so a good
// file is parsed once and at full speed.
std::string failing_key(const std::string& text) {
  struct Frame {
    bool array;
    std::string key;
    size_t index = 0;
  };
  std::vector<Frame> frames;
  auto follow = [&frames](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        frames.push_back({event == json::parse_event_t::array_start, "", 0});
        break;
      case json::parse_event_t::key:
        frames.back().key = parsed.get<std::string>();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames.pop_back();
        [[fallthrough]];
      case json::parse_event_t::value:
        // A member or element done: what fails next is the next one.
        if (frames.empty()) break;
        if (frames.back().array) {
          ++frames.back().index;
        } else {
          frames.back().key.clear();
        }
        break;
    }
    return true;  // a discarded value would hide its members' events
  };
  try {
    [[maybe_unused]] const json parsed = json::parse(text, follow);
  } catch (const json::exception&) {
    // Expected: `frames` now ends where the first parse failed.
  }
  std::string key;
  for (const Frame& f : frames) {
    if (f.array) {
      key += "[" + std::to_string(f.index) + "]";
    } else if (!f.key.empty()) {
      key += (key.empty() ? "" : ".") + f.key;
    }
  }
  return key;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_input(path, "cannot open the file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json parse_file(const std::string& path) {
  const std::string text = python_tokens_to_json(read_text(path));
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    // Not only syntax: a number beyond a double (1e400) is an out_of_range error.
    const std::string key = failing_key(text);
    // Quoted as JSON, so that a key holding a line break keeps the message on one line.
    bad_input(path,
              (key.empty() ? "" : json(key).dump() + ": ") + "not valid JSON: " + json_message(e));
  }
}

// The keys whose values the layouts read as numbers; a string or object there is a broken file.
void check_numbers(const std::string& path, const json& j) {
  static const char* const kNumeric[] = {"completed",
                                         "failed",
                                         "duration",
                                         "total_input_tokens",
                                         "total_output_tokens",
                                         "request_throughput",
                                         "output_throughput",
                                         "total_token_throughput"};
  for (const char* key : kNumeric) {
    if (j.contains(key) && !j[key].is_number()) {
      bad_input(path, std::string("\"") + key + "\" is not a number");
    }
  }
  if (j.contains("latencies") && !j["latencies"].is_array()) {
    bad_input(path, "\"latencies\" is not an array");
  }
}

}  // namespace

namespace {

bool has_number(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number();
}

std::string test_name_of(const json& j, const std::string& path) {
  if (j.contains("test_name") && j["test_name"].is_string())
    return j["test_name"].get<std::string>();
  return core::valid_utf8_text(fs::path(path).stem().string());  // file names need not be UTF-8
}

// A vLLM (or servebench) latency / throughput result as a run of that kind.
RunResult run_of_kind(json j, const std::string& path, const char* kind) {
  RunResult run;
  run.source = path;
  run.format = j.contains("servebench") && j["servebench"].is_object() ? "servebench" : "vllm";
  run.kind = kind;
  run.test_name = test_name_of(j, path);
  run.result = std::move(j);
  return run;
}

// `vllm bench latency` / `servebench latency`: the iterations' latencies in seconds.
RunResult latency_run(json j, const std::string& path) {
  if (!j["latencies"].is_array()) bad_input(path, "\"latencies\" is not an array");
  if (!j["percentiles"].is_object()) bad_input(path, "\"percentiles\" is not an object");
  if (!j["avg_latency"].is_number()) bad_input(path, "\"avg_latency\" is not a number");
  for (const auto& [p, v] : j["percentiles"].items()) {
    if (!v.is_number()) bad_input(path, "\"percentiles." + p + "\" is not a number");
  }
  return run_of_kind(std::move(j), path, "latency");
}

// `vllm bench throughput` / `servebench throughput`.
RunResult throughput_run(json j, const std::string& path) {
  for (const char* key : {"elapsed_time", "num_requests", "total_num_tokens", "requests_per_second",
                          "tokens_per_second"}) {
    if (j.contains(key) && !j[key].is_number()) {
      bad_input(path, std::string("\"") + key + "\" is not a number");
    }
  }
  return run_of_kind(std::move(j), path, "throughput");
}

// The runs of a parsed result file, told apart by their keys.
std::vector<RunResult> runs_in(json j, const std::string& path) {
  if (!j.is_object()) bad_input(path, "not a result: the top level is not a JSON object");
  if (is_search_summary(j)) return importers::search_runs(j, path);
  if (j.contains("benchmarks") && j["benchmarks"].is_array()) {
    return importers::guidellm_runs(j, path);
  }
  if (j.contains("load_summary") || (j.contains("successes") && j.contains("failures"))) {
    return {importers::inference_perf_run(j, path)};
  }
  if (importers::is_aiperf_export(j)) return {importers::aiperf_run(j, path)};
  if (importers::is_genai_perf_export(j)) return {importers::genai_perf_run(j, path)};
  if (importers::is_sglang_result(j)) return importers::sglang_runs({j}, path);
  if (j.contains("avg_latency") && j.contains("latencies") && j.contains("percentiles")) {
    return {latency_run(std::move(j), path)};
  }
  if (has_number(j, "elapsed_time") && j.contains("requests_per_second") &&
      j.contains("tokens_per_second")) {
    return {throughput_run(std::move(j), path)};
  }
  if (!j.contains("completed") || !j.contains("request_throughput")) {
    bad_input(path,
              "not a result servebench reads: not a vLLM or servebench serving, latency or "
              "throughput result, a GuideLLM benchmarks report, an inference-perf lifecycle "
              "report, an AIPerf or genai-perf profile export or a SGLang bench_serving result");
  }
  check_numbers(path, j);
  RunResult run;
  run.source = path;
  run.format = j.contains("servebench") && j["servebench"].is_object() ? "servebench" : "vllm";
  run.test_name = test_name_of(j, path);
  run.result = std::move(j);
  return {std::move(run)};
}

// AIPerf's or genai-perf's profile export CSV: the tool by the file's name, else by the header.
RunResult stats_csv_run(const std::string& path) {
  const importers::StatsCsv csv = importers::read_stats_csv(read_text(path), path);
  const std::string name = fs::path(path).filename().string();
  bool genai_perf = csv.genai_perf_layout;
  if (name.find("genai_perf") != std::string::npos) genai_perf = true;
  if (name.find("aiperf") != std::string::npos) genai_perf = false;
  return genai_perf ? importers::genai_perf_run(csv.stats, path)
                    : importers::aiperf_run(csv.stats, path);
}

// SGLang bench_serving's output: one result object a line, appended run after run.
std::vector<RunResult> jsonl_runs(const std::string& path) {
  std::vector<json> lines;
  std::stringstream in(read_text(path));
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    json j;
    try {
      j = json::parse(python_tokens_to_json(line));
    } catch (const json::exception& e) {
      bad_input(path, where + "not valid JSON: " + json_message(e));
    }
    if (j.is_object() && j.contains("sent_ns") && j.contains("index")) {
      bad_input(path, where +
                          "a servebench per-request records file, not a result (report reads the "
                          "result JSON beside it)");
    }
    if (!importers::is_sglang_result(j)) {
      bad_input(path, where +
                          "not a SGLang bench_serving result (no completed and "
                          "mean_e2e_latency_ms)");
    }
    lines.push_back(std::move(j));
  }
  if (lines.empty()) bad_input(path, "no result lines");
  return importers::sglang_runs(lines, path);
}

}  // namespace

std::vector<RunResult> load_file(const std::string& path) {
  const std::string extension = fs::path(path).extension().string();
  try {
    if (extension == ".csv") return {stats_csv_run(path)};
    if (extension == ".jsonl") return jsonl_runs(path);
  } catch (const json::exception& e) {
    bad_input(path, "not a result servebench reads: " + json_message(e));
  }
  json j = parse_file(path);
  try {
    return runs_in(std::move(j), path);
  } catch (const json::exception& e) {
    // A value of a type no check above expected: still this file's fault, not a bug.
    bad_input(path, "not a result servebench reads: " + json_message(e));
  }
}

RunResult load_run(const std::string& path) {
  std::vector<RunResult> runs = load_file(path);
  if (runs.size() != 1) {
    bad_input(path, "holds " + std::to_string(runs.size()) + " runs where one was expected");
  }
  return std::move(runs.front());
}

namespace {

// JSON files beside results that are not runs: a suite's own summary (`servebench suite` writes
// it beside the results), several targets' combined figures, inference-perf's per-request list,
// and the other files of AIPerf's and genai-perf's artifact directories (their inputs,
// perf_analyzer's raw per-request export, AIPerf's multi-run aggregates, server metrics and
// outputs).
bool is_companion_file(const std::string& name) {
  static const char* const kNames[] = {"summary.json",
                                       "per_request_lifecycle_metrics.json",
                                       "inputs.json",
                                       "llm_inputs.json",
                                       "profile_export.json",
                                       "outputs.json",
                                       "server_metrics_export.json"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return name.ends_with(".combined.json") || name.ends_with("_aiperf_aggregate.json") ||
         name.ends_with("_aiperf_collated.json") || name.ends_with("_telemetry_data.json");
}

}  // namespace

namespace importers {

void KeyReader::fail(const std::string& key, const std::string& message) const {
  throw core::Error(core::ErrorKind::kInput, path, key + ": " + message);
}

const json* KeyReader::object(const json& j, const std::string& key, const std::string& at) const {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  if (!it->is_object()) fail(at + key, "not an object");
  return &*it;
}

std::optional<double> KeyReader::number(const json& j, const std::string& key,
                                        const std::string& at) const {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) fail(at + key, "not a number");
  return it->get<double>();
}

const json* object_at(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* key : keys) {
    const auto it = at->find(key);
    if (it == at->end() || !it->is_object()) return nullptr;
    at = &*it;
  }
  return at;
}

void put(json& out, const std::string& key, const std::optional<double>& v) {
  if (v) out[key] = *v;
}

}  // namespace importers

std::vector<RunResult> load_runs(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return load_file(path);
  std::vector<std::string> files;
  bool has_stage_reports = false;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && entry.path().extension() == ".json" &&
        !is_companion_file(name)) {
      files.push_back(entry.path().string());
    }
    if (name.starts_with("stage_") && name.ends_with("_lifecycle_metrics.json")) {
      has_stage_reports = true;
    }
  }
  if (ec) bad_input(path, "cannot list the directory: " + ec.message());
  // inference-perf's whole-run summary repeats its stages' requests: the stages are the rows.
  if (has_stage_reports) {
    std::erase_if(files, [](const std::string& f) {
      return fs::path(f).filename() == "summary_lifecycle_metrics.json";
    });
  }
  // An SLO search's summary brings its probes: their files are not read twice.
  if (const auto summary = std::find_if(
          files.begin(), files.end(),
          [](const std::string& f) { return fs::path(f).filename() == "search.json"; });
      summary != files.end()) {
    const std::string summary_path = *summary;
    const json j = parse_file(summary_path);
    if (is_search_summary(j)) {
      for (const std::string& probe : search_probe_paths(j, summary_path)) {
        std::erase_if(files, [&](const std::string& f) {
          std::error_code missing;  // a probe file that is gone matches nothing
          return fs::equivalent(f, probe, missing);
        });
      }
    }
  }
  if (files.empty()) bad_input(path, "no *.json result files in the directory");
  std::sort(files.begin(), files.end());
  std::vector<RunResult> runs;
  runs.reserve(files.size());
  for (const std::string& f : files) {
    for (RunResult& r : load_file(f)) runs.push_back(std::move(r));
  }
  // As the suite or sweep ran them: by start ("date"), then a sweep's own order
  // (servebench.load.sequence: a sweep's files share their date), then by name.
  const auto started = [](const RunResult& r) {
    const auto it = r.result.find("date");
    return it != r.result.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const auto sequence = [](const RunResult& r) {
    const json* j = &r.result;
    for (const char* key : {"servebench", "load", "sequence"}) {
      if (!j->is_object() || !j->contains(key)) return -1.0;
      j = &(*j)[key];
    }
    return j->is_number() ? j->get<double>() : -1.0;
  };
  if (std::all_of(runs.begin(), runs.end(),
                  [&](const RunResult& r) { return !started(r).empty(); })) {
    std::stable_sort(runs.begin(), runs.end(), [&](const RunResult& a, const RunResult& b) {
      const std::string da = started(a), db = started(b);
      if (da != db) return da < db;
      return sequence(a) < sequence(b);
    });
  }
  return runs;
}

namespace {

std::optional<double> number_at(const json& j, const std::string& key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

// "p99_e2el_ms" -> 99; nullopt when the key is not "p<number>_e2el_ms".
std::optional<double> e2el_percentile(const std::string& key) {
  const std::string suffix = "_e2el_ms";
  if (key.size() <= suffix.size() + 1 || key[0] != 'p' ||
      key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  const std::string word = key.substr(1, key.size() - suffix.size() - 1);
  try {
    size_t used = 0;
    const double p = std::stod(word, &used);
    if (used != word.size() || p < 0 || p > 100) return std::nullopt;
    return p;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// vLLM's E2EL is the latency of each successful request; its "latencies" array holds those and a
// 0 for every failure. The non-zero entries are the samples when they number `completed`.
std::optional<std::vector<double>> e2el_samples_ms(const json& result) {
  const auto it = result.find("latencies");
  const auto completed = number_at(result, "completed");
  if (it == result.end() || !it->is_array() || !completed) return std::nullopt;
  std::vector<double> samples;
  for (const json& v : *it) {
    if (v.is_number() && v.get<double>() > 0) samples.push_back(v.get<double>() * 1000.0);
  }
  if (samples.size() != static_cast<size_t>(*completed)) return std::nullopt;
  return samples;
}

}  // namespace

std::optional<double> figure(const RunResult& run, const std::string& key) {
  if (auto v = number_at(run.result, key)) return v;
  // A dotted key walks nested objects ("percentiles.99"); "p99.9_e2el_ms" is not one.
  if (const size_t dot = key.find('.'); dot != std::string::npos) {
    const json* at = &run.result;
    size_t from = 0, to = dot;
    while (to != std::string::npos && at) {
      const auto it = at->find(key.substr(from, to - from));
      at = it == at->end() || !it->is_object() ? nullptr : &*it;
      from = to + 1;
      to = key.find('.', from);
    }
    if (at) {
      if (auto v = number_at(*at, key.substr(from))) return v;
    }
  }
  const bool e2el_aggregate = key == "mean_e2el_ms" || key == "median_e2el_ms" ||
                              key == "std_e2el_ms" || e2el_percentile(key).has_value();
  if (!e2el_aggregate) return std::nullopt;
  auto samples = e2el_samples_ms(run.result);
  if (!samples) return std::nullopt;
  const auto p = e2el_percentile(key);
  const metrics::Distribution d =
      metrics::summarize(std::move(*samples), p ? std::vector<double>{*p} : std::vector<double>{});
  if (key == "mean_e2el_ms") return d.mean;
  if (key == "median_e2el_ms") return d.median;
  if (key == "std_e2el_ms") return d.std;
  return d.percentiles.front().second;
}

}  // namespace servebench::report
