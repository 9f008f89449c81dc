// The shared half of `servebench latency` and `servebench throughput`'s flags (bench_kinds.h).
#include "cli/bench_kinds.h"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <fmt/format.h>

#include "cli/values.h"
#include "core/error.h"
#include "run/names.h"

namespace servebench::cli::bench {
namespace {

namespace fs = std::filesystem;

// The flags each command sets on its runs (the load is what the command measures).
const std::set<std::string> kReserved = {
    "--num-prompts",       "--request-rate",     "--max-concurrency",   "--burstiness",
    "--dataset-name",      "--random-input-len", "--random-output-len", "--random-range-ratio",
    "--random-prefix-len", "--save-result",      "--append-result",     "--result-dir",
    "--result-filename",   "--metadata",         "--num-warmups",       "--input-len",
    "--output-len",        "--ramp-up-strategy", "--ramp-up-start-rps", "--ramp-up-end-rps"};

std::string dashed(std::string flag) {
  const size_t eq = flag.find('=');
  if (eq != std::string::npos) flag.resize(eq);
  if (flag.rfind("--", 0) == 0) std::replace(flag.begin() + 2, flag.end(), '_', '-');
  return flag;
}

}  // namespace

bool is_reserved_run_flag(const std::string& flag) {
  return kReserved.count(dashed(flag)) > 0;
}

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(),
                     [&](const std::string& a) { return dashed(a) == flag; });
}

void check_pass_through(const std::vector<std::string>& args, const std::string& command) {
  for (const std::string& a : args) {
    if (a.rfind("--", 0) == 0 && is_reserved_run_flag(a)) {
      throw core::Error(core::ErrorKind::kUsage, dashed(a),
                        "set by `servebench " + command + "` itself (see its --help)");
    }
  }
}

std::string runs_dir(const std::string& output_json) {
  if (!output_json.empty()) {
    std::string stem = output_json;
    if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
    return stem + ".runs";
  }
  std::random_device rd;
  return (fs::temp_directory_path() /
          ("servebench-" + std::to_string(getpid()) + "-" + std::to_string(rd())))
      .string();
}

CLI::App* add_kind_subcommand(CLI::App& app, const std::string& name, const std::string& help) {
  CLI::App* sub = app.add_subcommand(name, help);
  sub->allow_extras();
  return sub;
}

void add_vllm_option(CLI::App& sub, const std::string& name, std::string& target,
                     const std::string& help) {
  std::string underscored = name;
  std::replace(underscored.begin() + 2, underscored.end(), '-', '_');
  sub.add_option(underscored == name ? name : name + "," + underscored, target, help)
      ->capture_default_str();
}

void add_metadata_option(CLI::App& sub, std::vector<std::string>& target) {
  sub.add_option("--metadata", target, "KEY=VALUE pairs stored in the result JSON")
      ->expected(0, CLI::detail::expected_max_vector_size)
      ->allow_extra_args();
}

void EngineOnlySettings::add_n(CLI::App& sub) {
  add_vllm_option(sub, "--n", n_, "sequences per prompt (only 1 against a server)");
}

void EngineOnlySettings::add_switch(CLI::App& sub, const std::string& name) {
  switches_.emplace_back(name, false);
  sub.add_flag(name, switches_.back().second, "vLLM engine only: refused");
}

void EngineOnlySettings::check() const {
  if (parse_int("--n", n_, 1, 1 << 20) != 1) {
    throw core::Error(core::ErrorKind::kUsage, "--n",
                      "only 1 against a server (one sequence per request)");
  }
  for (const auto& [name, given] : switches_) {
    if (given) {
      throw core::Error(core::ErrorKind::kUsage, name,
                        "a setting of vLLM's offline engine; not available against a server");
    }
  }
}

}  // namespace servebench::cli::bench
