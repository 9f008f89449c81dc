// Atomic output files and output locks (files.h).
#include "core/files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.h"

namespace servebench::core {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void cannot_write(const std::string& path, const std::string& where,
                               const std::string& reason) {
  throw Error(ErrorKind::kInput, where.empty() ? path : where,
              "cannot write '" + path + "': " + reason);
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void write_file_atomic(const std::string& given_path, std::string_view bytes,
                       const std::string& where) {
  struct stat st {};
  if (::stat(given_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A FIFO, a terminal or /dev/stdout cannot be replaced by a rename: written in place.
    const int fd = ::open(given_path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) cannot_write(given_path, where, std::strerror(errno));
    const bool written = write_all(fd, bytes);
    const int err = errno;
    ::close(fd);
    if (!written) cannot_write(given_path, where, std::string("write: ") + std::strerror(err));
    return;
  }
  // A symbolic link keeps pointing where it did: its target is what gets replaced.
  std::error_code ec;
  const std::string path =
      fs::is_symlink(given_path, ec) ? fs::weakly_canonical(given_path, ec).string() : given_path;
  const std::string dir = directory_of(path);
  // mkstemp in the same directory: rename() is atomic only within one file system.
  std::string tmp =
      (fs::path(dir) / ("." + fs::path(path).filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0)
    cannot_write(
        path, where,
        std::string("cannot create a temporary file in '") + dir + "': " + std::strerror(errno));
  auto fail = [&](const char* step) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    cannot_write(path, where, std::string(step) + ": " + std::strerror(err));
  };
  // mkstemp makes 0600; a result is as readable as any file this process creates.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) fail("chmod");
  if (!write_all(fd, bytes)) fail("write");
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(path, where, std::string("close: ") + std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    cannot_write(path, where, std::string("rename: ") + std::strerror(err));
  }
  // The rename itself is durable once the directory is synced.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

OutputLock::OutputLock(const std::string& path, const std::string& where)
    : OutputLock(path, where, nullptr) {}

std::unique_ptr<OutputLock> OutputLock::try_hold(const std::string& path,
                                                 const std::string& where) {
  bool busy = false;
  std::unique_ptr<OutputLock> lock(new OutputLock(path, where, &busy));
  if (busy) return nullptr;
  return lock;
}

OutputLock::OutputLock(const std::string& path, const std::string& where, bool* busy)
    : lock_path_(path + ".lock") {
  const std::string place = where.empty() ? path : where;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw Error(ErrorKind::kInput, place,
                  "cannot create the lock file '" + lock_path_ + "': " + std::strerror(errno));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char pid[32] = {};
      const ssize_t n = ::pread(fd_, pid, sizeof pid - 1, 0);
      ::close(fd_);
      fd_ = -1;
      if (err != EWOULDBLOCK) {
        throw Error(ErrorKind::kInput, place,
                    "cannot lock '" + lock_path_ + "': " + std::strerror(err));
      }
      if (busy) {
        *busy = true;
        return;
      }
      std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
      throw Error(ErrorKind::kInput, place,
                  "'" + path + "' is being written by another process (" +
                      (holder.empty() ? std::string("pid unknown") : "pid " + holder) +
                      "; lock file " + lock_path_ + ")");
    }
    // The holder before us may have removed the file between our open and flock: then we hold
    // a lock on a name that no longer exists; try again.
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 &&
        held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
        // The pid is only for the message another process shows; the lock holds without it.
      }
      return;
    }
    ::close(fd_);
    fd_ = -1;
  }
  throw Error(ErrorKind::kInput, place, "cannot lock '" + lock_path_ + "': it keeps changing");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still locked: a waiter then sees the name gone
  ::close(fd_);
}

}  // namespace servebench::core
