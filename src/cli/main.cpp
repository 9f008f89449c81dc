#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "core/error.h"
#include "core/interrupt.h"

int main(int argc, char** argv) {
  using namespace servebench;
  CLI::App app{"servebench: a benchmark for LLM inference serving", "servebench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "servebench 0.1.0");
  struct Command {
    CLI::App* sub;
    cli::Action action;
  };
  // Registration order is the order `servebench --help` lists them.
  Command commands[] = {
      {nullptr, cli::add_run_command(app)},      {nullptr, cli::add_sim_command(app)},
      {nullptr, cli::add_report_command(app)},   {nullptr, cli::add_compare_command(app)},
      {nullptr, cli::add_tokenize_command(app)}, {nullptr, cli::add_suite_command(app)},
      {nullptr, cli::add_latency_command(app)},  {nullptr, cli::add_throughput_command(app)},
      {nullptr, cli::add_merge_command(app)},
  };
  commands[0].sub = app.get_subcommand("run");
  commands[1].sub = app.get_subcommand("sim");
  commands[2].sub = app.get_subcommand("report");
  commands[3].sub = app.get_subcommand("compare");
  commands[4].sub = app.get_subcommand("tokenize");
  commands[5].sub = app.get_subcommand("suite");
  commands[6].sub = app.get_subcommand("latency");
  commands[7].sub = app.get_subcommand("throughput");
  commands[8].sub = app.get_subcommand("merge");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every bad flag or value exits 2, as core::Error(kUsage) does.
    return app.exit(e) == 0 ? 0 : 2;
  }
  // The commands that measure or serve handle SIGINT and SIGTERM alike in every phase
  // (core/interrupt.h); the others keep the default (a signal ends them at once).
  for (const char* name : {"run", "suite", "latency", "throughput"}) {
    if (app.get_subcommand(name)->parsed()) core::install_interrupt_handler();
  }
  if (app.get_subcommand("sim")->parsed())
    core::install_interrupt_handler("stopping the simulator");
  try {
    for (auto& c : commands) {
      if (c.sub->parsed()) return c.action();
    }
  } catch (const core::Interrupted& e) {  // SIGINT/SIGTERM before the main run: the phase
    std::fprintf(stderr, "servebench: %s\n", core::redact_secrets(e.what()).c_str());
    return e.exit_code();
  } catch (const core::Error& e) {
    std::fprintf(stderr, "servebench: %s\n", core::redact_secrets(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "servebench: internal error: %s\n",
                 core::redact_secrets(e.what()).c_str());
    return 70;
  }
  return 0;
}
