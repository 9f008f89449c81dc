// File: cli/commands.h
// Each subcommand registers its flags on the top-level CLI11 app and returns the action to run
// when it was chosen. Flags live beside their command (sim_command.cpp, run_command.cpp,
// tokenize_command.cpp); this folder turns flags into the plain option structs and specs of the
// other parts (a run::Spec for `run`) and nothing more.
#pragma once

#include <functional>

#include "run/kinds.h"

namespace CLI {
class App;
}

namespace servebench::cli {

// Returns the command's exit code; throws core::Error for expected failures.
using Action = std::function<int()>;

Action add_sim_command(CLI::App& app);
// `run` (run_command.cpp): its flags become a run::Spec (run_flags.h), run by run::execute.
Action add_run_command(CLI::App& app);
// `suite` runs a file of named `run` tests in order (suite_command.cpp, docs/run.md "Suites").
Action add_suite_command(CLI::App& app);
// `latency` and `throughput` are vLLM's `bench latency` / `bench throughput` run against a
// server (latency_command.cpp, throughput_command.cpp, docs/run.md).
Action add_latency_command(CLI::App& app);
Action add_throughput_command(CLI::App& app);
// The same commands' flags registered on `app`; the function returned, called after `app`
// parsed, gives the kind's spec (run/kinds.h). check_only: check only what creates nothing
// (a suite checks every test before the first runs; the kinds check the rest when they run).
std::function<run::LatencySpec()> add_latency_flags(CLI::App& app, bool check_only);
std::function<run::ThroughputSpec()> add_throughput_flags(CLI::App& app, bool check_only);
// `tokenize` shows what a tokenizer makes of a text, or of ids (tokenize_command.cpp).
Action add_tokenize_command(CLI::App& app);
// `report` and `compare` read finished result files (report_command.cpp, compare_command.cpp).
Action add_report_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
// `merge` combines one run's shard results into one result (merge_command.cpp, docs/scale-out.md).
Action add_merge_command(CLI::App& app);

}  // namespace servebench::cli
