// File: run/output_files.h
// The files one point writes: the records file, appended as requests finish, and the result
// JSON (vLLM's file name, or --result-filename), created before the point starts so that an
// unwritable place costs no benchmark time.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "core/error.h"
#include "record/record.h"
#include "run/run.h"

namespace servebench::run {

class RecordsFile {
 public:
  // `flag`: the flag that chose the path, for the message.
  RecordsFile(const std::string& path, const char* flag) : path_(path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      throw core::Error(core::ErrorKind::kInput, flag,
                        "cannot write '" + path + "': " + std::strerror(errno));
    }
  }
  ~RecordsFile() {
    flush();
    if (fd_ >= 0) ::close(fd_);
  }
  RecordsFile(const RecordsFile&) = delete;
  RecordsFile& operator=(const RecordsFile&) = delete;

  // One line per finished request, kept until flush(): the client calls it after each batch of
  // records it delivers (finished within a few ms of each other), so a killed run keeps what it
  // measured and a busy one makes one write(2) per batch, not per request.
  void append(const record::RequestRecord& r) {
    if (fd_ < 0) return;
    if (pending_.empty()) first_pending_index_ = r.index;
    pending_ += record::to_json_line(r);
    pending_ += '\n';
    if (pending_.size() >= kMaxPendingBytes) flush();
  }

  // Hands the pending lines to the kernel. A failed write (a full disk) is said once; the run and
  // its result go on without the rest of the file.
  void flush() {
    const char* at = pending_.data();
    size_t left = pending_.size();
    while (fd_ >= 0 && left > 0) {
      const ssize_t written = ::write(fd_, at, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        std::fprintf(stderr,
                     "servebench: --records '%s': write failed (%s); the record of request %llu "
                     "and those delivered after it are not in the file (the result counts "
                     "them)\n",
                     path_.c_str(), written < 0 ? std::strerror(errno) : "nothing written",
                     static_cast<unsigned long long>(first_pending_index_));
        ::close(fd_);
        fd_ = -1;
        break;
      }
      at += written;
      left -= static_cast<size_t>(written);
    }
    pending_.clear();
  }

  // `options` with flush() after each batch of delivered records.
  client::RunOptions flushing(const client::RunOptions& options) {
    client::RunOptions with_flush = options;
    with_flush.after_records = [this] { flush(); };
    return with_flush;
  }

 private:
  static constexpr size_t kMaxPendingBytes = 1 << 20;
  std::string path_;
  int fd_ = -1;
  std::string pending_;
  uint64_t first_pending_index_ = 0;
};

struct Paths {
  std::string result;   // "" unless --save-result / --append-result
  std::string records;  // "" = no records file
  // The flags that chose them, for messages.
  const char* result_flag = "--save-result";
  const char* records_flag = "--records";
};

// vLLM's compute_result_filename, and the records file beside it (or in --result-dir); makes
// the directories and checks that the result can be written.
Paths output_paths(const Spec& c, const std::string& model_id, const std::string& date);

// Writes (or with `append`, appends a line of) `result`; errors name `flag`.
void save_result(const std::string& path, const nlohmann::json& result, bool append,
                 const char* flag);

}  // namespace servebench::run
