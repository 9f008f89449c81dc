// File: cli/bench_kinds.h
// What `servebench latency` and `servebench throughput` share (latency_command.cpp,
// throughput_command.cpp). Both are vLLM's offline benchmarks (`vllm bench latency`,
// `vllm bench throughput`) turned into runs against a server: their flags become a
// run::LatencySpec / run::ThroughputSpec (run/kinds.h), each run's spec made from
// `servebench run` flags (run_flags.h). Internal to the cli part.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}

namespace servebench::cli::bench {

// The command's subcommand: its own options below, every other flag passed to `servebench run`.
CLI::App* add_kind_subcommand(CLI::App& app, const std::string& name, const std::string& help);
// A string option under vLLM's name and its underscored spelling ("--num-iters", "--num_iters"),
// its default shown in --help.
void add_vllm_option(CLI::App& sub, const std::string& name, std::string& target,
                     const std::string& help);
// --metadata KEY=VALUE …, as `servebench run` takes it.
void add_metadata_option(CLI::App& sub, std::vector<std::string>& target);

// Settings only vLLM's offline engine has: parsed, so that the error can say why, then refused.
class EngineOnlySettings {
 public:
  // --n: sequences per prompt, 1 against a server.
  void add_n(CLI::App& sub);
  // A switch of the engine (--profile, --disable-detokenize, …).
  void add_switch(CLI::App& sub, const std::string& name);
  // A usage error naming the first setting given (--n other than 1 first), if any.
  void check() const;

 private:
  std::string n_ = "1";
  std::deque<std::pair<std::string, bool>> switches_;  // name, given; a deque keeps addresses
};

// Flags the commands set on every run they make; given by the user they are refused.
bool is_reserved_run_flag(const std::string& flag);
// Whether `args` (pass-through `servebench run` flags) give `flag`, as "--flag", "--flag=v"
// or the underscored spelling.
bool has_flag(const std::vector<std::string>& args, const std::string& flag);
// Refuses a pass-through flag the command sets itself (one line naming it, exit code 2).
void check_pass_through(const std::vector<std::string>& args, const std::string& command);

// Where the runs' own results go: "<output-json less .json>.runs/", or a fresh temporary
// directory (removed after the runs) when there is no --output-json.
std::string runs_dir(const std::string& output_json);
}  // namespace servebench::cli::bench
