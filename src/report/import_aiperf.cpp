// NVIDIA's two benchmark tools' summary exports mapped onto vLLM's result keys: AIPerf's
// profile_export_aiperf.json (schema: docs/reference/json-export-schema.md and
// docs/metrics-reference.md of ai-dynamo/aiperf; each metric a block {"unit", "avg", "min",
// "max", "p1" … "p99", "std"}, derived and aggregate metrics "unit" and "avg" only) and
// genai-perf's profile_export_genai_perf.json (triton-inference-server/perf_analyzer,
// genai-perf/genai_perf/export_data/json_exporter.py: the Statistics dict of
// metrics/statistics.py, the same block shape, plus "input_config", the command's arguments).
// Their CSV exports (AIPerf's exporters/metrics_csv_exporter.py, genai-perf's
// export_data/csv_exporter.py) hold the same blocks as rows "Name (unit),avg,min,…" and
// "Name (unit),Value"; read_stats_csv turns them back into blocks. Where the tools' definitions
// differ from vLLM's is in docs/metrics.md ("Other tools' definitions").
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "report/import_formats.h"

namespace servebench::report::importers {
namespace {

using nlohmann::json;

struct Reader : KeyReader {
  // The metric block `tag`, or null when absent or null (AIPerf writes null for metrics it did
  // not compute).
  const json* block(const json& report, const std::string& tag) const {
    return object(report, tag, "");
  }
  std::optional<double> stat(const json& b, const std::string& tag, const std::string& s) const {
    return number(b, s, tag + ".");
  }
  std::string unit(const json& b, const std::string& tag) const {
    const auto it = b.find("unit");
    if (it == b.end() || it->is_null()) return "";
    if (!it->is_string()) fail(tag + ".unit", "not a string");
    return it->get<std::string>();
  }
  // The factor that turns a value in `unit` into `to` ("ms" or "s"); "unit" is authoritative
  // (AIPerf's schema says so), so a time metric in an unknown unit is refused, not guessed.
  double time_factor(const json& b, const std::string& tag, const std::string& to) const {
    const std::string u = unit(b, tag);
    double seconds = 0;
    if (u == "ms") {
      seconds = 1e-3;
    } else if (u == "s" || u == "sec" || u == "seconds") {
      seconds = 1;
    } else if (u == "us") {
      seconds = 1e-6;
    } else if (u == "ns") {
      seconds = 1e-9;
    } else {
      fail(tag + ".unit", "'" + u + "' is not a unit of time (ms, s, sec, us, ns)");
    }
    return to == "ms" ? seconds * 1e3 : seconds;
  }
};

bool is_percentile_key(const std::string& key) {
  static const std::regex kPercentile(R"(p[0-9]+(\.[0-9]+)?)");
  return std::regex_match(key, kPercentile);
}

// A latency block under vLLM's aggregate keys: avg → mean_, p50 → median_ (and p50_), std,
// min, max and every pN, in ms.
void put_latency(json& out, const json& report, const Reader& r, const std::string& tag,
                 const std::string& suffix) {
  const json* b = r.block(report, tag);
  if (!b) return;
  const double k = r.time_factor(*b, tag, "ms");
  auto scaled = [&](const char* s) -> std::optional<double> {
    const auto v = r.stat(*b, tag, s);
    return v ? std::optional<double>(*v * k) : std::nullopt;
  };
  put(out, "mean_" + suffix, scaled("avg"));
  put(out, "median_" + suffix, scaled("p50"));
  put(out, "std_" + suffix, scaled("std"));
  put(out, "min_" + suffix, scaled("min"));
  put(out, "max_" + suffix, scaled("max"));
  for (const auto& [key, value] : b->items()) {
    if (is_percentile_key(key)) put(out, key + "_" + suffix, scaled(key.c_str()));
  }
}

// A scalar metric's value ("avg" of a derived or aggregate block), as it is.
std::optional<double> scalar(const json& report, const Reader& r, const std::string& tag) {
  const json* b = r.block(report, tag);
  return b ? r.stat(*b, tag, "avg") : std::nullopt;
}

// The first of several tags a metric has gone by.
std::optional<double> scalar_of(const json& report, const Reader& r,
                                std::initializer_list<const char*> tags) {
  for (const char* tag : tags) {
    if (auto v = scalar(report, r, tag)) return v;
  }
  return std::nullopt;
}

// "2025-10-17T20:22:08.939332" (UTC) → "20251017-202208", vLLM's "date"; nullopt if unreadable.
std::optional<std::string> compact_date(const json& report, const std::string& key) {
  const auto it = report.find(key);
  if (it == report.end() || !it->is_string()) return std::nullopt;
  std::tm tm{};
  std::istringstream in(it->get<std::string>());
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  return utc_compact_date(static_cast<double>(timegm(&tm)));
}

// Tools name their summary file the same in every run; the directory around it is the run's
// name (AIPerf's and genai-perf's artifact directories are named by model, endpoint and load).
std::string run_name(const std::string& path, const std::string& default_stem) {
  const std::filesystem::path p(path);
  const std::string stem = p.stem().string();
  const std::string dir = p.parent_path().filename().string();
  if (stem.starts_with(default_stem) && !dir.empty() && dir != ".") return dir;
  return stem;
}

std::optional<double> number_at(const json* j, const char* key) {
  if (!j) return std::nullopt;
  const auto it = j->find(key);
  if (it == j->end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The first model name of a list or a string.
std::optional<std::string> model_of(const json* j, const char* key) {
  if (!j) return std::nullopt;
  const auto it = j->find(key);
  if (it == j->end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array() && !it->empty() && it->front().is_string()) {
    return it->front().get<std::string>();
  }
  return std::nullopt;
}

// The load as vLLM's keys: a request rate (else "inf") and a concurrency limit (else null).
void put_load(json& out, std::optional<double> rate, std::optional<double> concurrency) {
  out["request_rate"] = rate && *rate > 0 ? json(*rate) : json("inf");
  out["max_concurrency"] = concurrency && *concurrency > 0 ? json(*concurrency) : json(nullptr);
}

RunResult finish(json out, const std::string& path, const char* format, std::string name) {
  out["backend"] = format;
  out["test_name"] = name;
  RunResult run;
  run.source = path;
  run.format = format;
  run.test_name = std::move(name);
  run.result = std::move(out);
  return run;
}

}  // namespace

bool is_aiperf_export(const json& j) {
  if (j.contains("aiperf_version") || j.contains("schema_version")) return true;
  if (j.contains("benchmark_duration") && j["benchmark_duration"].is_object()) return true;
  return object_at(j, {"input_config", "endpoint"}) != nullptr;  // AIPerf's nested config
}

bool is_genai_perf_export(const json& j) {
  for (const char* tag : {"request_throughput", "request_latency", "time_to_first_token"}) {
    if (j.contains(tag) && j[tag].is_object() && j[tag].contains("avg")) return true;
  }
  return false;
}

RunResult aiperf_run(const json& report, const std::string& path) {
  const Reader r{{path}};
  json out = json::object();
  const auto completed = scalar(report, r, "request_count");
  if (!completed) r.fail("request_count", "missing: not an AIPerf profile export");
  out["completed"] = static_cast<int64_t>(*completed);
  // error_request_count is written only when requests failed; error_summary counts them too.
  if (const auto failed = scalar(report, r, "error_request_count")) {
    out["failed"] = static_cast<int64_t>(*failed);
  } else if (const auto it = report.find("error_summary"); it != report.end() && it->is_array()) {
    int64_t failed_count = 0;
    for (size_t i = 0; i < it->size(); ++i) {
      const json& e = (*it)[i];
      if (!e.is_object() || !e.contains("count") || !e["count"].is_number()) {
        r.fail("error_summary[" + std::to_string(i) + "].count", "not a number");
      }
      failed_count += e["count"].get<int64_t>();
    }
    out["failed"] = failed_count;
  } else if (report.contains("error_summary") || report.contains("error_request_count")) {
    out["failed"] = 0;  // present but null: a run without errors
  }
  if (const json* d = r.block(report, "benchmark_duration")) {
    const double k = r.time_factor(*d, "benchmark_duration", "s");
    if (const auto v = r.stat(*d, "benchmark_duration", "avg")) out["duration"] = *v * k;
  }
  put(out, "total_input_tokens",
      scalar_of(report, r, {"total_isl", "total_input_sequence_length"}));
  put(out, "total_output_tokens",
      scalar_of(report, r, {"total_osl", "total_output_sequence_length"}));
  put(out, "request_throughput", scalar(report, r, "request_throughput"));
  put(out, "output_throughput", scalar(report, r, "output_token_throughput"));
  put(out, "total_token_throughput", scalar(report, r, "total_token_throughput"));
  put(out, "request_goodput", scalar(report, r, "goodput"));
  put_latency(out, report, r, "time_to_first_token", "ttft_ms");
  // AIPerf's ITL is per request (latency − TTFT) / (OSL − 1): vLLM's TPOT. Its per-chunk gaps,
  // pooled over every request, are "inter_chunk_latency": vLLM's ITL.
  put_latency(out, report, r, "inter_token_latency", "tpot_ms");
  put_latency(out, report, r, "inter_chunk_latency", "itl_ms");
  put_latency(out, report, r, "request_latency", "e2el_ms");
  if (auto date = compact_date(report, "start_time")) out["date"] = *date;

  const json* config = object_at(report, {"input_config"});
  const json* loadgen = config ? object_at(*config, {"loadgen"}) : nullptr;
  put_load(out, number_at(loadgen, "request_rate"), number_at(loadgen, "concurrency"));
  if (auto model = model_of(config ? object_at(*config, {"endpoint"}) : nullptr, "model_names")) {
    out["model_id"] = *model;
  }
  json source = json::object();
  for (const char* key :
       {"schema_version", "aiperf_version", "benchmark_id", "was_cancelled", "start_time",
        "end_time", "time_to_second_token", "output_token_throughput_per_user"}) {
    if (report.contains(key)) source[key] = report[key];
  }
  out["aiperf"] = std::move(source);
  return finish(std::move(out), path, "aiperf", run_name(path, "profile_export_aiperf"));
}

RunResult genai_perf_run(const json& report, const std::string& path) {
  const Reader r{{path}};
  json out = json::object();
  const auto completed = scalar(report, r, "request_count");
  if (completed) out["completed"] = static_cast<int64_t>(*completed);
  const auto request_throughput = scalar(report, r, "request_throughput");
  if (!request_throughput) {
    r.fail("request_throughput", "missing: not a genai-perf profile export");
  }
  out["request_throughput"] = *request_throughput;
  put(out, "output_throughput", scalar(report, r, "output_token_throughput"));
  put(out, "request_goodput", scalar(report, r, "request_goodput"));
  put_latency(out, report, r, "time_to_first_token", "ttft_ms");
  // genai-perf's ITL, like AIPerf's, is per request (latency − TTFT) / (OSL − 1): vLLM's TPOT.
  // It keeps no per-chunk gaps in its summary, so vLLM's ITL is n/a.
  put_latency(out, report, r, "inter_token_latency", "tpot_ms");
  put_latency(out, report, r, "request_latency", "e2el_ms");
  // genai-perf keeps neither the duration nor token totals; with the request count they follow
  // exactly from its throughput (count / duration) and mean lengths (sum / count).
  if (completed && *request_throughput > 0) {
    const double duration = *completed / *request_throughput;
    out["duration"] = duration;
    std::optional<double> in, outp;
    if (const json* isl = r.block(report, "input_sequence_length")) {
      if (auto mean = r.stat(*isl, "input_sequence_length", "avg")) in = *mean * *completed;
    }
    if (const json* osl = r.block(report, "output_sequence_length")) {
      if (auto mean = r.stat(*osl, "output_sequence_length", "avg")) outp = *mean * *completed;
    }
    put(out, "total_input_tokens", in);
    put(out, "total_output_tokens", outp);
    if (in && outp) out["total_token_throughput"] = (*in + *outp) / duration;
  }
  const json* config = object_at(report, {"input_config"});
  put_load(out, number_at(config, "request_rate"), number_at(config, "concurrency"));
  if (auto model = model_of(config, "model")) out["model_id"] = *model;
  json source = json::object();
  for (const char* key : {"time_to_second_token", "output_token_throughput_per_request",
                          "output_token_throughput_per_user"}) {
    if (report.contains(key)) source[key] = report[key];
  }
  out["genai_perf"] = std::move(source);
  return finish(std::move(out), path, "genai-perf", run_name(path, "profile_export"));
}

namespace {

// RFC 4180 rows (Python's csv module writes them): quoted fields may hold commas, quotes
// doubled; an empty line is an empty row.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) row.push_back(std::move(field));
      rows.push_back(std::move(row));
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

// "Time To First Token (ms)" → {"time_to_first_token", "ms"}; genai-perf title-cases the tag,
// AIPerf writes its header, both lower-case with underscores to the JSON tag (AIPerf's totals
// are "total_isl"/"total_osl" in JSON: the mapping looks for both names).
std::pair<std::string, std::string> tag_and_unit(const std::string& name) {
  std::string label = name, unit;
  if (const size_t open = name.rfind(" ("); open != std::string::npos && name.ends_with(")")) {
    label = name.substr(0, open);
    unit = name.substr(open + 2, name.size() - open - 3);
  }
  std::string tag;
  for (char c : label) {
    tag +=
        c == ' ' || c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return {tag, unit};
}

}  // namespace

StatsCsv read_stats_csv(const std::string& text, const std::string& path) {
  StatsCsv out;
  out.stats = json::object();
  std::vector<std::string> header;
  const std::vector<std::vector<std::string>> rows = csv_rows(text);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::string>& row = rows[i];
    const std::string where = "line " + std::to_string(i + 1);
    if (row.empty()) {
      header.clear();  // a blank line ends a section
      continue;
    }
    if (header.empty()) {
      header = row;
      if (header.front() != "Metric") {
        // GPU telemetry sections ("Endpoint,GPU_Index,…", genai-perf's "Metric,GPU,…") carry
        // no figure the tables read: skipped to their end.
        header = {"skip"};
      } else if (std::find(header.begin(), header.end(), "GPU") != header.end()) {
        header = {"skip"};
      }
      if (header.size() > 4 && header[4] == "p99") out.genai_perf_layout = true;
      continue;
    }
    if (header.front() == "skip") continue;
    if (row.size() != header.size()) {
      throw core::Error(core::ErrorKind::kInput, path,
                        where + ": " + std::to_string(row.size()) + " cells under a header of " +
                            std::to_string(header.size()));
    }
    const auto [tag, unit] = tag_and_unit(row.front());
    json block = {{"unit", unit}};
    for (size_t c = 1; c < row.size(); ++c) {
      std::string cell = row[c];
      std::erase(cell, ',');  // genai-perf writes "1,234.56"
      if (cell.empty()) continue;
      const std::string stat = header[c] == "Value" ? "avg" : header[c];
      try {
        size_t used = 0;
        const double v = std::stod(cell, &used);
        if (used != cell.size()) throw std::invalid_argument(cell);
        block[stat] = v;
      } catch (const std::exception&) {
        throw core::Error(core::ErrorKind::kInput, path,
                          where + ": \"" + row.front() + "\" " + header[c] + ": '" + row[c] +
                              "' is not a number");
      }
    }
    out.stats[tag] = std::move(block);
  }
  if (out.stats.empty()) {
    throw core::Error(core::ErrorKind::kInput, path,
                      "no \"Metric,…\" rows: not an AIPerf or genai-perf profile export CSV");
  }
  return out;
}

}  // namespace servebench::report::importers
