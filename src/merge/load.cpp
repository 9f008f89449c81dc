// Reading shard results back: the `servebench.shard` block, the result files under a directory,
// and each result's per-request records (record::from_json_line).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "merge/merge.h"

namespace servebench::merge {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

template <typename T>
T get_or(const json& block, const char* key, T fallback, const std::string& where) {
  if (!block.contains(key) || block[key].is_null()) return fallback;
  try {
    return block[key].get<T>();
  } catch (const json::exception&) {
    throw core::Error(core::ErrorKind::kInput, where + ": servebench.shard." + key,
                      "has the wrong type (" + std::string(block[key].type_name()) + ")");
  }
}

bool is_result_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return p.extension() == ".json" && !name.ends_with(".pytorch.json");
}

// A servebench result that may be merged: vLLM's keys, a servebench block, not itself a merge.
bool mergeable(const json& j, bool runs) {
  if (!j.is_object() || !j.contains("completed") || !j.contains("servebench")) return false;
  const json& sb = j["servebench"];
  if (!sb.is_object() || sb.contains("merge")) return false;
  return runs || sb.contains("shard");
}

std::optional<json> read_json(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, p.string(), "cannot read");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::vector<record::RequestRecord> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, path, "cannot read the records file");
  std::vector<record::RequestRecord> out;
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) continue;
    out.push_back(record::from_json_line(line, path + ":" + std::to_string(line_no)));
  }
  return out;
}

Input load_one(const fs::path& p, json result, bool runs) {
  Input in;
  in.result_path = p.string();
  const json& sb = result["servebench"];
  if (sb.contains("shard")) {
    in.shard = parse_shard_block(sb["shard"], in.result_path);
  } else if (!runs) {
    throw core::Error(core::ErrorKind::kInput, in.result_path,
                      "not a shard result (no servebench.shard); merge independent runs with "
                      "--runs");
  }
  in.result = std::move(result);
  in.records_path = find_records_file(in.result_path, in.result);
  in.records = read_records(in.records_path);
  return in;
}

}  // namespace

ShardBlock parse_shard_block(const json& block, const std::string& where) {
  if (!block.is_object())
    throw core::Error(core::ErrorKind::kInput, where + ": servebench.shard", "is not an object");
  ShardBlock b;
  for (const char* key : {"index", "count", "plan_hash"}) {
    if (!block.contains(key))
      throw core::Error(core::ErrorKind::kInput, where + ": servebench.shard",
                        std::string("has no \"") + key + "\"");
  }
  b.index = get_or<int>(block, "index", 0, where);
  b.count = get_or<int>(block, "count", 0, where);
  if (b.count < 1 || b.index < 0 || b.index >= b.count)
    throw core::Error(core::ErrorKind::kInput, where + ": servebench.shard",
                      "index " + std::to_string(b.index) + " is not in 0.." +
                          std::to_string(b.count - 1) + " (count " + std::to_string(b.count) + ")");
  b.plan_hash = get_or<std::string>(block, "plan_hash", "", where);
  b.host = get_or<std::string>(block, "host", "", where);
  b.t0_wall_ns = get_or<int64_t>(block, "t0_wall_ns", -1, where);
  b.clock_offset_ns = get_or<int64_t>(block, "clock_offset_ns", 0, where);
  b.start_at_ns = get_or<int64_t>(block, "start_at_ns", -1, where);
  b.started_late_ns = get_or<int64_t>(block, "started_late_ns", 0, where);
  b.requests_planned = get_or<int64_t>(block, "requests_planned", -1, where);
  b.records_file = get_or<std::string>(block, "records_file", "", where);
  return b;
}

json shard_block_json(const ShardBlock& b) {
  auto or_null = [](int64_t v) { return v >= 0 ? json(v) : json(nullptr); };
  return {{"index", b.index},
          {"count", b.count},
          {"plan_hash", b.plan_hash},
          {"host", b.host},
          {"t0_wall_ns", or_null(b.t0_wall_ns)},
          {"clock_offset_ns", b.clock_offset_ns},
          {"start_at_ns", or_null(b.start_at_ns)},
          {"started_late_ns", b.started_late_ns},
          {"requests_planned", or_null(b.requests_planned)},
          {"records_file", b.records_file}};
}

std::string find_records_file(const std::string& result_path, const json& result) {
  const json& sb = result.at("servebench");
  std::string named;
  if (sb.contains("shard") && sb["shard"].value("records_file", "") != "")
    named = sb["shard"]["records_file"].get<std::string>();
  else if (sb.contains("records_file") && sb["records_file"].is_string())
    named = sb["records_file"].get<std::string>();
  if (named.empty())
    throw core::Error(core::ErrorKind::kInput, result_path,
                      "names no records file (servebench.records_file); run with --records or "
                      "--save-result");
  const fs::path dir = fs::path(result_path).parent_path();
  const fs::path p(named);
  std::error_code ec;
  for (const fs::path& candidate : {dir / p.filename(), p, dir / p}) {
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
  }
  throw core::Error(core::ErrorKind::kInput, result_path,
                    "its records file '" + named + "' is neither beside it nor at that path");
}

std::vector<Input> load_inputs(const std::vector<std::string>& paths, bool runs) {
  std::vector<Input> inputs;
  for (const std::string& arg : paths) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(arg, ec)) {
        if (e.is_regular_file() && is_result_file(e.path())) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      size_t found = 0;
      for (const fs::path& f : files) {
        std::optional<json> j = read_json(f);
        if (!j || !mergeable(*j, runs)) continue;
        inputs.push_back(load_one(f, std::move(*j), runs));
        ++found;
      }
      if (found == 0)
        throw core::Error(core::ErrorKind::kInput, arg,
                          runs ? "holds no servebench result"
                               : "holds no shard result (a result JSON with servebench.shard)");
    } else if (fs::is_regular_file(arg, ec)) {
      std::optional<json> j = read_json(arg);
      if (!j || !j->is_object() || !j->contains("servebench"))
        throw core::Error(core::ErrorKind::kInput, arg, "is not a servebench result");
      if ((*j)["servebench"].contains("merge"))
        throw core::Error(core::ErrorKind::kInput, arg, "is a merged result, not a shard's");
      inputs.push_back(load_one(arg, std::move(*j), runs));
    } else {
      throw core::Error(core::ErrorKind::kInput, arg, "no such file or directory");
    }
  }
  return inputs;
}

}  // namespace servebench::merge
