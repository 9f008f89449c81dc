// File: run/kind_runs.h
// What the latency and throughput kinds (latency.cpp, throughput.cpp) share: running a spec with
// its console muted, reading its result back, and writing vLLM's JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run.h"

namespace servebench::run {

// Runs `spec` in this process with its standard output muted (its errors still go to stderr).
// Returns the run's exit code.
int execute_muted(Spec spec);
// Reads a result the run saved; a missing or torn file is a core::Error naming it.
nlohmann::json read_result(const std::string& path);
// Writes `j` (indented by 4, as vLLM's json.dump(indent=4)) to `path`; errors name `flag` and
// say why (the system's reason).
void write_json(const std::string& path, const nlohmann::json& j, const std::string& flag);
// The records file a run writes beside its result `file` in `dir`.
std::string records_path(const std::string& dir, const std::string& file);
// Prints the first 10 failed requests of a run's records file on stderr under `heading`, as a
// run prints them ("Error 0: …"): the run's files are removed on the way out unless `kept`.
// Returns what the one-line message about the failures should add, each part only when it
// holds: " (errors above; every request in <records_file>)".
std::string show_failures(const std::string& records_file, const std::string& heading, bool kept);
// The kind's JSON: `result` with the --metadata pairs at its top.
void add_metadata(nlohmann::json& result,
                  const std::vector<std::pair<std::string, std::string>>& metadata);

// Removes a directory of runs on the way out unless it is kept.
class RunsDirCleanup {
 public:
  RunsDirCleanup(std::string dir, bool keep) : dir_(std::move(dir)), keep_(keep) {}
  ~RunsDirCleanup();
  RunsDirCleanup(const RunsDirCleanup&) = delete;
  RunsDirCleanup& operator=(const RunsDirCleanup&) = delete;

 private:
  std::string dir_;
  bool keep_;
};

}  // namespace servebench::run
