// File: core/files.h
// Output files that are never seen half-written and never written by two runs at once: results,
// summaries, reports. Both throw core::Error (kInput) naming the path and the reason.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace servebench::core {

// Writes `bytes` to `path` so that a reader sees the old file or the whole new one, never a
// part: a temporary file in the same directory (so the rename is atomic), written, fsynced,
// renamed over `path`, then the directory fsynced. A failure (full disk, file size limit, no
// permission) throws Error(kInput, where, "cannot write '<path>': <reason>"), leaving `path` as
// it was and no temporary file behind. `where` is the flag that named the path ("" = the path).
void write_file_atomic(const std::string& path, std::string_view bytes,
                       const std::string& where = "");

// Holds `path` for this process until destroyed: `<path>.lock`, created if absent, flock()ed
// (the kernel drops the lock when the process dies, even by kill -9, so no stale lock stays)
// and holding this process's id. A path another process holds is refused at once:
// Error(kInput, where, "'<path>' is being written by another process (pid N; lock file
// <path>.lock)"). The lock file is removed on release.
class OutputLock {
 public:
  explicit OutputLock(const std::string& path, const std::string& where = "");
  // As the constructor, but nullptr instead of the error when another process holds `path`
  // (other failures still throw): for a default name that can step aside to another.
  static std::unique_ptr<OutputLock> try_hold(const std::string& path,
                                              const std::string& where = "");
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  const std::string& lock_path() const { return lock_path_; }

 private:
  // `busy`: set instead of throwing when another process holds the path.
  OutputLock(const std::string& path, const std::string& where, bool* busy);
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace servebench::core
