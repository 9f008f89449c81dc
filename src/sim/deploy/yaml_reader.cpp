// Strict YAML reading for deployment files (yaml_reader.h).
#include "sim/deploy/yaml_reader.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace servebench::sim::deploy {

std::string key_path(const std::string& at, const std::string& field) {
  return at.empty() ? field : at + "." + field;
}

void YamlReader::fail(const YAML::Node& at, const std::string& key,
                      const std::string& message) const {
  std::string where = path_;
  if (at.IsDefined() && at.Mark().line >= 0) where += ":" + std::to_string(at.Mark().line + 1);
  throw core::Error(core::ErrorKind::kInput, where,
                    key.empty() ? message : "key '" + key + "': " + message);
}

void YamlReader::expect_map(const YAML::Node& node, const std::string& key,
                            std::initializer_list<const char*> known) const {
  if (!node.IsMap()) fail(node, key, "expected a mapping");
  for (const auto& item : node) {
    std::string name = item.first.IsScalar() ? item.first.Scalar() : "?";
    bool ok = false;
    for (const char* k : known) ok = ok || name == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(item.first, key_path(key, name), "unknown key (known: " + list + ")");
    }
  }
}

std::string YamlReader::text(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar() || node.Scalar().empty()) fail(node, key, "expected a non-empty name");
  return node.Scalar();
}

int64_t YamlReader::integer(const YAML::Node& node, const std::string& key, int64_t min,
                            int64_t max) const {
  int64_t v = 0;
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < min || v > max) {
    fail(node, key,
         "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
             (s.empty() ? "" : ", got '" + s + "'"));
  }
  return v;
}

double YamlReader::number(const YAML::Node& node, const std::string& key, double min,
                          double max) const {
  double v = 0;
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) ||
      v < min || v > max) {
    char range[96];
    std::snprintf(range, sizeof range, "expected a number from %g to %g", min, max);
    fail(node, key, std::string(range) + (s.empty() ? "" : ", got '" + s + "'"));
  }
  return v;
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& key) const {
  const std::string s = node.IsScalar() ? node.Scalar() : "";
  if (s == "true") return true;
  if (s == "false") return false;
  fail(node, key, "expected true or false");
}

std::vector<std::string> YamlReader::names(const YAML::Node& node, const std::string& key) const {
  std::vector<std::string> out;
  if (node.IsScalar()) {
    out.push_back(text(node, key));
    return out;
  }
  if (!node.IsSequence() || node.size() == 0) fail(node, key, "expected a list of names");
  for (size_t i = 0; i < node.size(); ++i) {
    out.push_back(text(node[i], key + "[" + std::to_string(i) + "]"));
  }
  return out;
}

void YamlReader::get(const YAML::Node& map, const std::string& at, const char* field, int32_t& out,
                     int64_t min, int64_t max) const {
  if (const YAML::Node n = map[field]) {
    out = static_cast<int32_t>(integer(n, key_path(at, field), min, max));
  }
}

void YamlReader::get(const YAML::Node& map, const std::string& at, const char* field, double& out,
                     double min, double max) const {
  if (const YAML::Node n = map[field]) out = number(n, key_path(at, field), min, max);
}

void YamlReader::get(const YAML::Node& map, const std::string& at, const char* field,
                     bool& out) const {
  if (const YAML::Node n = map[field]) out = boolean(n, key_path(at, field));
}

void YamlReader::get(const YAML::Node& map, const std::string& at, const char* field,
                     std::string& out) const {
  if (const YAML::Node n = map[field]) out = text(n, key_path(at, field));
}

}  // namespace servebench::sim::deploy
