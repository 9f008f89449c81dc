#include "run/output_files.h"

#include <filesystem>
#include <fstream>

#include "core/files.h"
#include "report/report.h"
#include "run/names.h"

namespace servebench::run {
namespace {

namespace fs = std::filesystem;

void make_dir(const std::string& dir, const char* flag) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot create '" + dir + "': " + ec.message());
}

}  // namespace

Paths output_paths(const Spec& c, const std::string& model_id, const std::string& date) {
  Paths p;
  const std::string label = c.label.empty() ? c.backend : c.label;
  std::string name = c.result_filename;
  if (name.empty()) {
    name = c.ramp_up
               ? ramp_up_result_file_name(label, *c.ramp_up, c.max_concurrency, model_id, date)
               : result_file_name(label, c.request_rate, c.max_concurrency, model_id, date);
  }
  std::string in_dir = c.result_dir.empty() ? name : (fs::path(c.result_dir) / name).string();
  if (c.save_result || c.append_result) p.result = in_dir;
  if (!c.result_filename.empty()) {
    p.result_flag = "--result-filename";
  } else if (!c.result_dir.empty()) {
    p.result_flag = "--result-dir";
  }
  if (!c.records_path.empty()) {
    p.records = c.records_path;
  } else if (!p.result.empty() || !c.result_dir.empty()) {
    std::string stem = in_dir.size() > 5 && in_dir.ends_with(".json")
                           ? in_dir.substr(0, in_dir.size() - 5)
                           : in_dir;
    p.records = stem + ".records.jsonl";
    p.records_flag = p.result_flag;
  }
  make_dir(c.result_dir, "--result-dir");
  if (!p.records.empty()) make_dir(fs::path(p.records).parent_path().string(), p.records_flag);
  if (!p.result.empty()) check_writable(p.result, p.result_flag);
  return p;
}

void save_result(const std::string& path, const nlohmann::json& result, bool append,
                 const char* flag) {
  // Labels, metadata and server text may hold bytes that are not UTF-8: shown escaped, so that
  // the dump cannot throw after the run (docs/reliability.md).
  nlohmann::json clean = result;
  report::make_valid_utf8(clean);
  std::string text;
  if (append && fs::exists(path)) {
    std::ifstream in(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in && !in.eof())
      throw core::Error(core::ErrorKind::kInput, flag, "cannot read '" + path + "' to append");
    if (!text.empty()) text += "\n";
  }
  text += clean.dump();
  // A reader sees the old file or the whole new one, never a torn or empty result.
  core::write_file_atomic(path, text, flag);
}

}  // namespace servebench::run
