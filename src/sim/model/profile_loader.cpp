// load_engine_profile: a YAML mapping whose keys are EngineProfile's field names. Keys left
// out keep EngineProfile's defaults; `name` defaults to the file's stem. Every problem is one
// core::Error(kInput) naming file:line and the key.
#include <yaml-cpp/yaml.h>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "core/error.h"
#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

struct Field {
  const char* key;
  // Parses the scalar text into the profile; returns "" or what was expected.
  std::function<std::string(const std::string&, EngineProfile&)> set;
};

std::string set_positive_int(const std::string& text, int32_t& out) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 ||
      v > std::numeric_limits<int32_t>::max()) {
    return "an integer from 1 to 2147483647";
  }
  out = static_cast<int32_t>(v);
  return {};
}

std::string set_cost_us(const std::string& text, double& out) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v) || v < 0) {
    return "a number of microseconds >= 0";
  }
  out = v;
  return {};
}

std::string set_bool(const std::string& text, bool& out) {
  if (text == "true") {
    out = true;
  } else if (text == "false") {
    out = false;
  } else {
    return "true or false";
  }
  return {};
}

const std::vector<Field>& fields() {
  static const std::vector<Field> kFields = {
      {"name",
       [](const std::string& t, EngineProfile& p) -> std::string {
         if (t.empty()) return "a non-empty name";
         p.name = t;
         return {};
       }},
      {"max_num_seqs",
       [](const std::string& t, EngineProfile& p) { return set_positive_int(t, p.max_num_seqs); }},
      {"max_num_batched_tokens",
       [](const std::string& t, EngineProfile& p) {
         return set_positive_int(t, p.max_num_batched_tokens);
       }},
      {"chunked_prefill",
       [](const std::string& t, EngineProfile& p) { return set_bool(t, p.chunked_prefill); }},
      {"block_size",
       [](const std::string& t, EngineProfile& p) { return set_positive_int(t, p.block_size); }},
      {"num_gpu_blocks", [](const std::string& t,
                            EngineProfile& p) { return set_positive_int(t, p.num_gpu_blocks); }},
      {"step_overhead_us",
       [](const std::string& t, EngineProfile& p) { return set_cost_us(t, p.step_overhead_us); }},
      {"per_prefill_token_us",
       [](const std::string& t, EngineProfile& p) {
         return set_cost_us(t, p.per_prefill_token_us);
       }},
      {"per_decode_seq_us",
       [](const std::string& t, EngineProfile& p) { return set_cost_us(t, p.per_decode_seq_us); }},
      {"per_context_token_us",
       [](const std::string& t, EngineProfile& p) {
         return set_cost_us(t, p.per_context_token_us);
       }},
  };
  return kFields;
}

std::string at_line(const std::string& path, const YAML::Mark& mark) {
  return mark.line >= 0 ? path + ":" + std::to_string(mark.line + 1) : path;
}

}  // namespace

EngineProfile load_engine_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(core::ErrorKind::kInput, path,
                      std::string("cannot open engine profile: ") + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();

  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::Exception& e) {
    throw core::Error(core::ErrorKind::kInput, at_line(path, e.mark), "not valid YAML: " + e.msg);
  }

  EngineProfile profile;
  profile.name = std::filesystem::path(path).stem().string();
  if (root.IsNull()) return profile;  // an empty file: all defaults
  if (!root.IsMap()) {
    throw core::Error(core::ErrorKind::kInput, at_line(path, root.Mark()),
                      "expected a mapping of engine profile keys (see profiles/default.yaml)");
  }

  std::set<std::string> seen;
  for (const auto& item : root) {
    const YAML::Node& key_node = item.first;
    const YAML::Node& value = item.second;
    std::string key = key_node.IsScalar() ? key_node.Scalar() : "?";
    const std::string where = at_line(path, key_node.Mark());
    const Field* field = nullptr;
    for (const Field& f : fields()) {
      if (key == f.key) field = &f;
    }
    if (field == nullptr) {
      std::string known;
      for (const Field& f : fields()) known += (known.empty() ? "" : ", ") + std::string(f.key);
      throw core::Error(core::ErrorKind::kInput, where,
                        "unknown key '" + key + "' (known keys: " + known + ")");
    }
    if (!seen.insert(key).second) {
      throw core::Error(core::ErrorKind::kInput, where, "key '" + key + "' is given twice");
    }
    // A list, mapping or nothing: ask the parser what it expects by feeding it "".
    EngineProfile scratch;
    std::string expected =
        value.IsScalar() ? field->set(value.Scalar(), profile) : field->set("", scratch);
    if (!expected.empty()) {
      std::string got = value.IsScalar() ? "'" + value.Scalar() + "'"
                        : value.IsNull() ? "nothing"
                                         : "a list or mapping";
      throw core::Error(core::ErrorKind::kInput, where,
                        "key '" + key + "': expected " + expected + ", got " + got);
    }
  }
  return profile;
}

}  // namespace servebench::sim
