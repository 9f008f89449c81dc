// File: cli/suite.h
// `servebench suite FILE…`: YAML (or JSON) files of named tests of vLLM's performance suite's
// three kinds: serving tests (`servebench run`), expanded as vLLM expands serving-tests.json
// (run-performance-benchmarks.sh): one test per qps_list value (× max_concurrency_list value),
// named `<test_name>_qps_<qps>` or `<test_name>_qps_<qps>_concurrency_<n>`; latency and
// throughput tests (`servebench latency` / `throughput`, latency-tests.json and
// throughput-tests.json: "parameters", names starting latency_ / throughput_). suite_file.cpp reads
// and expands the file; suite_command.cpp runs the tests, resumes a suite and writes its summary.
// Internal to cli.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace servebench::cli::suite {

// One expanded test: what `servebench run` is given, and where each flag came from in the file.
struct Test {
  std::string name;                                         // e.g. "tp8_pp1_qps_01"
  std::string kind = "serving";                             // or "latency", "throughput"
  std::string where;                                        // e.g. "tests[2]" (for messages)
  std::vector<std::pair<std::string, std::string>> labels;  // stored as --metadata
  std::vector<std::string> run_args;  // after the command, without the suite's result flags
  // "--num-prompts" → "tests[2].client_parameters.num_prompts" (or "defaults.…", "…qps_list[1]")
  std::map<std::string, std::string> flag_origin;
};

// Reads and expands a suite file. Throws core::Error (kInput) as one line naming the file and
// the key: "suite.yaml: tests[2].client_parameters.num_prompts: lists are not allowed here".
std::vector<Test> load(const std::string& path);
// The same from text (`path` only names it in messages).
std::vector<Test> parse(const std::string& text, const std::string& path);

// The servebench arguments of a test ("run", "latency" or "throughput" first), its result going
// to `dir`/<name>.json.
std::vector<std::string> full_run_args(const Test& test, const std::string& dir);
// `args` as the shell command the suite prints ("servebench run …", quoted where needed), with
// secrets hidden: secret --header values (core::is_secret_header) and URL passwords.
std::string command_line(const std::vector<std::string>& args);
// Whether a serving test makes several results (`profile` or `stages`): they are saved in a
// directory `dir`/<name>/ instead of one file `dir`/<name>.json.
bool saves_many(const Test& test);
// The file a test's result is saved to, or the directory of its results (saves_many).
std::string result_path(const Test& test, const std::string& dir);

}  // namespace servebench::cli::suite
