// The shared half of `servebench latency` and `servebench throughput` (bench_kinds.h): each of
// their runs is a spec made from `servebench run` flags and executed in this process, with its
// standard output muted so that the command prints vLLM's own lines instead of one console block
// per iteration.
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

// Points stdout at /dev/null for its lifetime (the run's console block and progress lines).
class MutedStdout {
 public:
  MutedStdout() {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    const int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
    if (null_fd >= 0) close(null_fd);
  }
  ~MutedStdout() {
    std::fflush(stdout);
    if (saved_ >= 0) {
      dup2(saved_, STDOUT_FILENO);
      close(saved_);
    }
  }
  MutedStdout(const MutedStdout&) = delete;
  MutedStdout& operator=(const MutedStdout&) = delete;

 private:
  int saved_ = -1;
};

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

int execute_muted(run::Spec spec) {
  MutedStdout muted;
  return run::execute(std::move(spec));
}

nlohmann::json read_result(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::Error(core::ErrorKind::kInput, path, "the run saved no result");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("duration") || !j["duration"].is_number()) {
    throw core::Error(core::ErrorKind::kInput, path, "not a complete run result");
  }
  return j;
}

void write_json(const std::string& path, const nlohmann::json& j, const std::string& flag) {
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) fs::create_directories(parent, ec);
  const std::string text = j.dump(4) + "\n";
  auto fail = [&](int err) {
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot write '" + path + "': " + std::strerror(err));
  };
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(errno);
  for (size_t at = 0; at < text.size();) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      fail(err);
    }
    at += static_cast<size_t>(n);
  }
  if (close(fd) != 0) fail(errno);
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

void check_output_json(const std::string& path, bool check_only) {
  auto fail = [](const std::string& message) {
    throw core::Error(core::ErrorKind::kInput, "--output-json", message);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) fail("'" + path + "' is a directory; give the file to write");
  if (check_only) return;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::create_directories(parent, ec) && ec) {
    fail("cannot create '" + parent.string() + "': " + ec.message());
  }
  run::check_writable(path, "--output-json");
  const std::string runs = runs_dir(path);
  if (!fs::create_directories(runs, ec) && ec) {
    fail("cannot create '" + runs + "' for each run's result: " + ec.message());
  }
}

std::string records_path(const std::string& dir, const std::string& file) {
  std::string stem = file;
  if (stem.ends_with(".json")) stem.resize(stem.size() - 5);
  return (fs::path(dir) / (stem + ".records.jsonl")).string();
}

std::string show_failures(const std::string& records_file, const std::string& heading, bool kept) {
  std::ifstream in(records_file, std::ios::binary);
  std::vector<std::pair<uint64_t, std::string>> failed;  // plan index, error
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json r = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!r.is_object()) continue;
    const auto success = r.find("success");
    if (success == r.end() || !success->is_boolean() || success->get<bool>()) continue;
    const auto index = r.find("index");
    const auto error = r.find("error");
    failed.emplace_back(
        index != r.end() && index->is_number_unsigned() ? index->get<uint64_t>() : 0,
        error != r.end() && error->is_string() ? error->get<std::string>() : "");
  }
  const std::string shown = run::first_errors_text(std::move(failed));
  if (!shown.empty())
    std::fprintf(stderr, "%s (capping to 10):\n%s", heading.c_str(), shown.c_str());
  std::string where = shown.empty() ? "" : "errors above";
  if (kept) where += (where.empty() ? "" : "; ") + std::string("every request in ") + records_file;
  return where.empty() ? "" : " (" + where + ")";
}

void add_metadata(nlohmann::json& result, const std::vector<std::string>& items) {
  for (const auto& [key, value] : parse_pairs("--metadata", items, '=')) {
    result[key] = value;
  }
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
