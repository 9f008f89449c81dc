// Placeholder until the run command lands (being written now).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/error.h"

namespace servebench::cli {

Action add_run_command(CLI::App& app) {
  app.add_subcommand("run", "(not built yet)");
  return []() -> int { throw core::Error(core::ErrorKind::kInternal, "run", "not built yet"); };
}

}  // namespace servebench::cli
