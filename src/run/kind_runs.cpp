// The shared half of the latency and throughput kinds (kind_runs.h).
#include "run/kind_runs.h"

#include "run/kinds.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "core/files.h"
#include "report/report.h"
#include "run/names.h"
#include "run/output_files.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

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

int execute_muted(Spec spec) {
  MutedStdout muted;
  return execute(std::move(spec));
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
  nlohmann::json clean = j;  // server text or labels that are not UTF-8 must not stop the dump
  report::make_valid_utf8(clean);
  core::write_file_atomic(path, clean.dump(4) + "\n", flag);
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
  const std::string shown = first_errors_text(std::move(failed));
  if (!shown.empty())
    std::fprintf(stderr, "%s (capping to 10):\n%s", heading.c_str(), shown.c_str());
  std::string where = shown.empty() ? "" : "errors above";
  if (kept) where += (where.empty() ? "" : "; ") + std::string("every request in ") + records_file;
  return where.empty() ? "" : " (" + where + ")";
}

void add_metadata(nlohmann::json& result,
                  const std::vector<std::pair<std::string, std::string>>& metadata) {
  for (const auto& [key, value] : metadata) result[key] = value;
}

void check_output_json(const std::string& path, const std::string& runs, bool check_only) {
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
  hold_output(path, "--output-json");  // another live run writing it: refused before any run
  check_writable(path, "--output-json");
  if (!fs::create_directories(runs, ec) && ec) {
    fail("cannot create '" + runs + "' for each run's result: " + ec.message());
  }
}

RunsDirCleanup::~RunsDirCleanup() {
  std::error_code ec;
  if (!keep_) fs::remove_all(dir_, ec);
}

}  // namespace servebench::run
