// Placeholder until the sim command lands (being written now).
#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "core/error.h"

namespace servebench::cli {

Action add_sim_command(CLI::App& app) {
  app.add_subcommand("sim", "(not built yet)");
  return []() -> int { throw core::Error(core::ErrorKind::kInternal, "sim", "not built yet"); };
}

}  // namespace servebench::cli
