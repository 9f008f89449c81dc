#include "run/output_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "core/files.h"
#include "report/report.h"
#include "run/names.h"
#include "run/targets.h"

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

// This process's held outputs, by absolute path; kept until exit (then the locks are released
// and their files removed).
class HeldOutputs {
 public:
  // Holds `path`; false (and nothing held) when another process holds it and `may_step_aside`.
  bool hold(const std::string& path, const char* flag, bool may_step_aside) {
    std::error_code ec;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) check_writable(path, flag);  // "is a directory", now
      return true;  // a device or a FIFO: written in place, not locked
    }
    const std::string key = fs::absolute(path, ec).lexically_normal().string();
    std::lock_guard<std::mutex> guard(mutex_);
    if (held_.count(key)) return true;
    make_dir(fs::path(path).parent_path().string(), flag);
    check_writable(path, flag);  // a directory, no permission: said as such, not as a lock
    std::unique_ptr<core::OutputLock> lock;
    if (may_step_aside) {
      lock = core::OutputLock::try_hold(path, flag);
      if (!lock) return false;
    } else {
      lock = std::make_unique<core::OutputLock>(path, flag);
    }
    held_.emplace(key, std::move(lock));
    return true;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<core::OutputLock>> held_;
};

HeldOutputs& held_outputs() {
  static HeldOutputs held;
  return held;
}

std::string records_beside(const std::string& result) {
  const std::string stem =
      result.size() > 5 && result.ends_with(".json") ? result.substr(0, result.size() - 5) : result;
  return stem + ".records.jsonl";
}

}  // namespace

void hold_output(const std::string& path, const char* flag) {
  if (!path.empty()) held_outputs().hold(path, flag, false);
}

void hold_named_outputs(const Spec& c) {
  std::signal(SIGXFSZ, SIG_IGN);  // past RLIMIT_FSIZE: EFBIG from write(2), not death
  // Several targets name each target's files apart (targets.cpp): held per point.
  if (runs_several_targets(c)) return;
  hold_output(c.records_path, "--records");
  if (c.search) {
    const std::string dir = c.result_dir.empty() ? "." : c.result_dir;
    hold_output((fs::path(dir) / "search.json").string(), "--result-dir");
    return;
  }
  if (c.result_filename.empty() || !(c.save_result || c.append_result)) return;
  const std::string result = c.result_dir.empty()
                                 ? c.result_filename
                                 : (fs::path(c.result_dir) / c.result_filename).string();
  hold_output(result, "--result-filename");
  if (c.records_path.empty()) hold_output(records_beside(result), "--result-filename");
}

RecordsFile::RecordsFile(const std::string& path, const char* flag) : path_(path), flag_(flag) {
  if (path.empty()) return;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw core::Error(core::ErrorKind::kInput, flag,
                      "cannot write '" + path + "': " + std::strerror(errno));
  }
}

RecordsFile::~RecordsFile() {
  flush();
  if (fd_ < 0) return;
  ::fsync(fd_);  // what was measured survives a crash of the machine, too
  ::close(fd_);
}

void RecordsFile::append(const record::RequestRecord& r) {
  if (fd_ < 0) return;
  pending_ += record::to_json_line(r);
  pending_ += '\n';
  pending_lines_.push_back({pending_.size(), r.index, r.request_id});
  if (pending_.size() >= kMaxPendingBytes) flush();
}

void RecordsFile::flush() {
  size_t written = 0;
  while (fd_ >= 0 && written < pending_.size()) {
    const ssize_t n = ::write(fd_, pending_.data() + written, pending_.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      give_up(written, n < 0 ? errno : ENOSPC);
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (fd_ >= 0) file_bytes_ += pending_.size();
  pending_.clear();
  pending_lines_.clear();
}

void RecordsFile::give_up(size_t written, int err) {
  // The first line the write did not finish: it and every line after it are missing.
  size_t whole = 0;
  const PendingLine* missing = nullptr;
  for (const PendingLine& line : pending_lines_) {
    if (line.end > written) {
      missing = &line;
      break;
    }
    whole = line.end;
  }
  // A part of a line would make the file unreadable as JSONL: cut back to the last whole line.
  // (ftruncate fails harmlessly on a device such as /dev/full.)
  if (written > whole && ::ftruncate(fd_, static_cast<off_t>(file_bytes_ + whole)) != 0) {
    std::fprintf(stderr, "servebench: %s '%s': cannot remove a partial last line: %s\n", flag_,
                 path_.c_str(), std::strerror(errno));
  }
  ::fsync(fd_);
  ::close(fd_);
  fd_ = -1;
  std::string first = "none";
  if (missing) {
    first = "request " + std::to_string(missing->index);
    if (!missing->request_id.empty()) first += " (request id " + missing->request_id + ")";
  }
  std::fprintf(stderr,
               "servebench: %s '%s': write failed (%s); the file keeps the whole records written "
               "before it; the record of %s and every record delivered after it are not in the "
               "file (the result counts them)\n",
               flag_, path_.c_str(), std::strerror(err), first.c_str());
}

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
  const bool saved = c.save_result || c.append_result;
  // The default name names the result, or only the records beside it (--result-dir alone).
  const bool default_named =
      c.result_filename.empty() && (saved || (c.records_path.empty() && !c.result_dir.empty()));
  if (default_named) {
    // Two runs started in the same second get the same default name: the second steps aside.
    const std::string first = in_dir;
    const std::string stem = first.substr(0, first.size() - 5);  // vLLM's names end in .json
    for (int n = 2; !held_outputs().hold(in_dir, "--result-dir", true); ++n) {
      if (n > 100)
        throw core::Error(core::ErrorKind::kInput, "--result-dir",
                          "'" + first + "' and 99 names after it are being written by other runs");
      in_dir = stem + "-" + std::to_string(n) + ".json";
    }
    if (in_dir != first) {
      std::fprintf(stderr,
                   "servebench: '%s' is being written by another run started in the same "
                   "second; this run's %s '%s'\n",
                   first.c_str(), saved ? "result is" : "records are",
                   (saved ? in_dir : records_beside(in_dir)).c_str());
    }
  }
  if (saved) p.result = in_dir;
  if (!c.result_filename.empty()) {
    p.result_flag = "--result-filename";
  } else if (!c.result_dir.empty()) {
    p.result_flag = "--result-dir";
  }
  if (!c.records_path.empty()) {
    p.records = c.records_path;
  } else if (!p.result.empty() || !c.result_dir.empty()) {
    p.records = records_beside(in_dir);
    p.records_flag = p.result_flag;
  }
  make_dir(c.result_dir, "--result-dir");
  if (!p.records.empty()) make_dir(fs::path(p.records).parent_path().string(), p.records_flag);
  hold_output(p.result, p.result_flag);
  hold_output(p.records, p.records_flag);
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
