// File: sim/deploy/yaml_reader.h (internal)
// Strict reading of the deployment file's YAML: every problem is one core::Error(kInput)
// "file:line: key 'a.b[2].c': …", unknown keys included.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace servebench::sim::deploy {

class YamlReader {
 public:
  explicit YamlReader(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& message) const;
  // The mapping at `key` must only hold `known` keys.
  void expect_map(const YAML::Node& node, const std::string& key,
                  std::initializer_list<const char*> known) const;
  std::string text(const YAML::Node& node, const std::string& key) const;
  int64_t integer(const YAML::Node& node, const std::string& key, int64_t min, int64_t max) const;
  double number(const YAML::Node& node, const std::string& key, double min, double max) const;
  bool boolean(const YAML::Node& node, const std::string& key) const;
  std::vector<std::string> names(const YAML::Node& node, const std::string& key) const;

  // Optional fields of a mapping: leave `out` alone when `field` is absent.
  void get(const YAML::Node& map, const std::string& at, const char* field, int32_t& out,
           int64_t min = 1, int64_t max = 1 << 30) const;
  void get(const YAML::Node& map, const std::string& at, const char* field, double& out,
           double min = 0, double max = 1e18) const;
  void get(const YAML::Node& map, const std::string& at, const char* field, bool& out) const;
  void get(const YAML::Node& map, const std::string& at, const char* field, std::string& out) const;

 private:
  std::string path_;
};

// "a" + "b" → "a.b"; "" + "b" → "b".
std::string key_path(const std::string& at, const std::string& field);

}  // namespace servebench::sim::deploy
