// File: run/kinds.h
// vLLM's offline benchmarks (`vllm bench latency`, `vllm bench throughput`) carried out against
// a server: each iteration is a spec run by run::execute in this process with its console muted
// (the kind prints vLLM's own lines instead), its result read back; the kind writes vLLM's JSON.
// Suites of named tests of the three kinds run here too. `cli` builds these specs from the
// commands' flags and the suite files (docs/run.md, "Latency and throughput", "Suites").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "run/run.h"

namespace servebench::run {

// vLLM's latency.py: one batch of batch_size prompts sent at once, warmups untimed, then iters
// timed; each iteration's latency is its run's duration (first send to last response).
struct LatencySpec {
  Spec batch;  // one iteration, saved in batch.result_dir (removed after without output_json)
  int64_t batch_size = 8, input_len = 32, output_len = 128, warmups = 10, iters = 30;
  std::string output_json;                                    // vLLM's latency JSON; "" = none
  std::vector<std::pair<std::string, std::string>> metadata;  // stored at the JSON's top
};
int execute_latency(const LatencySpec& spec);

// vLLM's throughput.py: every prompt at once; elapsed_time is the run's duration.
struct ThroughputSpec {
  Spec run;  // saved as run.result_dir/run.result_filename (removed after without output_json)
  std::string output_json;  // vLLM's throughput JSON; "" = none
  std::vector<std::pair<std::string, std::string>> metadata;
};
int execute_throughput(const ThroughputSpec& spec);

// Before any run, so that a bad --output-json costs no benchmark time: `path` must name a file
// that can be written, not a directory, and `runs` (its runs' directory) must be creatable.
// Errors name --output-json and say why. check_only: only what creates nothing (a --dry-run).
// The kinds check it fully themselves before their first run.
void check_output_json(const std::string& path, const std::string& runs, bool check_only);

// A suite (`servebench suite`): named tests of the three kinds, run in order. A test that fails
// is recorded and the suite goes on; Ctrl-C ends it after the test it interrupts; `resume` skips
// tests whose result file is complete. Writes summary.md, summary.json and suite_status.jsonl
// in `dir`; returns 0, 1 when a test failed, 130 after Ctrl-C.
struct SuiteTest {
  std::string name;
  std::string command_line;          // as printed before it runs (secrets hidden)
  std::string result_path;           // where its result goes
  bool result_is_directory = false;  // result_path is a directory of several results (a profile)
  std::variant<Spec, LatencySpec, ThroughputSpec> spec;
};
struct SuiteSpec {
  std::string file;  // the first suite file, named in the summary
  std::string dir;   // results and summary
  bool resume = false;
  std::vector<SuiteTest> tests;
};
int execute_suite(const SuiteSpec& suite);

}  // namespace servebench::run
