// The client side of a timeline (timeline_requests.h): each request's times from the records
// file a servebench run wrote beside its result, or from vLLM's --save-detailed arrays.
#include "report/timeline_requests.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "record/record.h"

namespace servebench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// `tokens` spread over the chunks when the server did not say how many each carried.
std::vector<double> spread(double tokens, size_t chunks) {
  if (chunks == 0) return {};
  return std::vector<double>(chunks, tokens / static_cast<double>(chunks));
}

RequestTimes times_of(const record::RequestRecord& r) {
  RequestTimes t;
  auto s = [](int64_t ns) { return ns >= 0 ? static_cast<double>(ns) / 1e9 : kNan; };
  t.sent_s = s(r.sent_ns);
  t.first_token_s = s(r.first_token_ns);
  t.success = r.success && r.last_token_ns >= 0;
  t.end_s = t.success ? s(r.last_token_ns) : (r.done_ns >= 0 ? s(r.done_ns) : s(r.last_token_ns));
  for (int64_t ns : r.chunk_ns) t.chunk_s.push_back(s(ns));
  if (r.chunk_tokens.size() == r.chunk_ns.size() && !r.chunk_tokens.empty()) {
    t.chunk_tokens.assign(r.chunk_tokens.begin(), r.chunk_tokens.end());
  } else {
    // A failure's output: what the server said, else what the client counted, else its chunks.
    double tokens = static_cast<double>(r.chunk_ns.size());
    if (r.success) {
      tokens = static_cast<double>(r.output_tokens());
    } else if (r.server_completion_tokens >= 0) {
      tokens = static_cast<double>(r.server_completion_tokens);
    } else if (r.client_output_tokens >= 0) {
      tokens = r.client_output_tokens;
    }
    t.chunk_tokens = spread(tokens, r.chunk_ns.size());
  }
  return t;
}

// The records JSONL a servebench run wrote: where its result says, or beside the result (a
// result and its records moved together keep their names).
std::optional<std::string> records_path(const RunResult& run) {
  std::vector<fs::path> candidates;
  const fs::path source(run.source);
  const json* ours = run.result.contains("servebench") && run.result["servebench"].is_object()
                         ? &run.result["servebench"]
                         : nullptr;
  if (ours && ours->contains("records_file") && (*ours)["records_file"].is_string()) {
    const fs::path named((*ours)["records_file"].get<std::string>());
    candidates.push_back(named);
    candidates.push_back(source.parent_path() / named.filename());
  }
  candidates.push_back(source.parent_path() / (source.stem().string() + ".records.jsonl"));
  for (const fs::path& p : candidates) {
    std::error_code ec;
    if (!p.empty() && fs::is_regular_file(p, ec)) return p.string();
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<RequestTimes>> requests_from_records(const RunResult& run) {
  const auto path = records_path(run);
  if (!path) return std::nullopt;
  std::ifstream in(*path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, *path, "cannot open the records file");
  std::vector<RequestTimes> out;
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const record::RequestRecord r =
        record::from_json_line(line, *path + " line " + std::to_string(number));
    if (r.warmup || r.sent_ns < 0) continue;  // warmups are not the run; unsent never started
    out.push_back(times_of(r));
  }
  return out;
}

// vLLM's --save-detailed arrays (servebench writes them too): start_times, ttfts, latencies,
// itls, output_lens, errors; vLLM's start times are raw perf_counter readings, so the earliest
// becomes 0.
std::optional<std::vector<RequestTimes>> requests_from_detailed_arrays(const RunResult& run) {
  const json& j = run.result;
  const char* const kArrays[] = {"start_times", "ttfts", "latencies", "itls", "output_lens"};
  for (const char* key : kArrays) {
    if (!j.contains(key) || !j[key].is_array()) return std::nullopt;
  }
  const size_t n = j["start_times"].size();
  auto fail = [&](const std::string& key, size_t i, const std::string& what) {
    throw core::Error(core::ErrorKind::kInput, run.source,
                      "\"" + key + "\"[" + std::to_string(i) + "]: " + what);
  };
  for (const char* key : kArrays) {
    if (j[key].size() != n) {
      throw core::Error(core::ErrorKind::kInput, run.source,
                        std::string("\"") + key + "\": " + std::to_string(j[key].size()) +
                            " entries where \"start_times\" has " + std::to_string(n));
    }
  }
  auto number = [&](const char* key, size_t i) {
    const json& v = j[key][i];
    if (!v.is_number()) fail(key, i, "not a number");
    return v.get<double>();
  };
  double origin = 0;
  if (run.format == "vllm" && n > 0) {
    origin = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i) origin = std::min(origin, number("start_times", i));
  }
  const json* errors = j.contains("errors") && j["errors"].is_array() ? &j["errors"] : nullptr;
  std::vector<RequestTimes> out(n);
  for (size_t i = 0; i < n; ++i) {
    RequestTimes& t = out[i];
    t.sent_s = number("start_times", i) - origin;
    const double ttft = number("ttfts", i), latency = number("latencies", i);
    const bool errored = errors && i < errors->size() && (*errors)[i].is_string() &&
                         !(*errors)[i].get<std::string>().empty();
    t.success = latency > 0 && !errored;  // vLLM leaves a failure's latency 0
    if (ttft > 0) {
      t.first_token_s = t.sent_s + ttft;
      t.chunk_s.push_back(t.first_token_s);
      if (!j["itls"][i].is_array()) fail("itls", i, "not an array");
      for (const json& gap : j["itls"][i]) {
        if (!gap.is_number()) fail("itls", i, "holds a gap that is not a number");
        t.chunk_s.push_back(t.chunk_s.back() + gap.get<double>());
      }
    }
    t.end_s = t.success ? t.sent_s + latency : (t.chunk_s.empty() ? kNan : t.chunk_s.back());
    const double tokens = t.success ? number("output_lens", i) : t.chunk_s.size();
    t.chunk_tokens = spread(tokens, t.chunk_s.size());
  }
  return out;
}

}  // namespace servebench::report
