// File: cli/commands.h
// Each subcommand registers its flags on the top-level CLI11 app and returns the action to run
// when it was chosen. Flags live beside their command (sim_command.cpp, run_command.cpp,
// tokenize_command.cpp); this folder turns flags into the plain option structs of the other
// parts and nothing more.
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace servebench::cli {

// Returns the command's exit code; throws core::Error for expected failures.
using Action = std::function<int()>;

Action add_sim_command(CLI::App& app);
// check_only: the action validates the flags and returns 0 without running (`suite --dry-run`).
Action add_run_command(CLI::App& app, bool check_only = false);
// `suite` runs a file of named `run` tests in order (suite_command.cpp, docs/run.md "Suites").
Action add_suite_command(CLI::App& app);
// `latency` and `throughput` are vLLM's `bench latency` / `bench throughput` run against a
// server (latency_command.cpp, throughput_command.cpp, docs/run.md); check_only as for run.
Action add_latency_command(CLI::App& app, bool check_only = false);
Action add_throughput_command(CLI::App& app, bool check_only = false);
// `tokenize` shows what a tokenizer makes of a text, or of ids (tokenize_command.cpp).
Action add_tokenize_command(CLI::App& app);
// `report` and `compare` read finished result files (report_command.cpp, compare_command.cpp).
Action add_report_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
// `merge` combines one run's shard results into one result (merge_command.cpp, docs/scale-out.md).
Action add_merge_command(CLI::App& app);

}  // namespace servebench::cli
