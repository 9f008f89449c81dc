// Atomic output files and output locks (core/files.h), including a full disk.
#include "core/files.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "core/error.h"

namespace servebench::core {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("servebench-files-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Entries of the directory, for "no temporary file left behind".
  size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(path_), {}));
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteFileAtomic, ReplacesTheWholeFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("result.json");
  std::ofstream(path) << "old";
  write_file_atomic(path, "{\"new\": true}\n");
  EXPECT_EQ(read(path), "{\"new\": true}\n");
  EXPECT_EQ(dir.entries(), 1u);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::owner_read, fs::perms::owner_read);
}

TEST(WriteFileAtomic, ASymbolicLinkKeepsPointingAtItsReplacedTarget) {
  TempDir dir;
  const std::string target = dir.file("target.json"), link = dir.file("link.json");
  std::ofstream(target) << "old";
  fs::create_symlink(target, link);
  write_file_atomic(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(dir.entries(), 2u);
}

TEST(WriteFileAtomic, AFifoIsWrittenInPlaceNotReplaced) {
  TempDir dir;
  const std::string fifo = dir.file("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string seen;
  std::thread reader([&] { seen = read(fifo); });
  write_file_atomic(fifo, "through the pipe");
  reader.join();
  EXPECT_EQ(seen, "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST(WriteFileAtomic, MissingDirectoryNamesThePathAndTheReason) {
  TempDir dir;
  const std::string path = dir.file("no/such/dir/result.json");
  try {
    write_file_atomic(path, "x", "--result-dir");
    ADD_FAILURE() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_EQ(e.where(), "--result-dir");
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot write '" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
  }
}

// A file size limit (as a full disk) fails the write; the old file stays whole and no
// temporary is left. In a child process: the limit is per process.
TEST(WriteFileAtomic, FileSizeLimitLeavesTheOldFileWhole) {
  TempDir dir;
  const std::string path = dir.file("result.json");
  std::ofstream(path) << "old result";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing
    rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 1;
    try {
      write_file_atomic(path, std::string(100'000, 'x'));
    } catch (const Error& e) {
      const std::string what = e.what();
      code =
          what.find(path) != std::string::npos && what.find("File too large") != std::string::npos
              ? 0
              : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error thrown, 2: the message lacks path or reason";
  EXPECT_EQ(read(path), "old result");
  EXPECT_EQ(dir.entries(), 1u);
}

// A really full file system: a 64 KiB tmpfs (root only; skipped elsewhere).
TEST(WriteFileAtomic, FullDiskLeavesTheOldFileWhole) {
  TempDir dir;
  const fs::path mnt = dir.path() / "small";
  fs::create_directories(mnt);
  if (::geteuid() != 0 || ::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs (needs root)";
  }
  const std::string path = (mnt / "result.json").string();
  std::ofstream(path) << "old result";
  try {
    write_file_atomic(path, std::string(1 << 20, 'x'));
    ADD_FAILURE() << "1 MiB fit in 64 KiB";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot write '" + path + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
  }
  EXPECT_EQ(read(path), "old result");
  EXPECT_EQ(static_cast<size_t>(std::distance(fs::directory_iterator(mnt), {})), 1u);
  ::umount2(mnt.c_str(), MNT_DETACH);
}

TEST(OutputLock, SecondHolderIsRefusedNamingThePathAndTheHolder) {
  TempDir dir;
  const std::string path = dir.file("result.json");
  {
    OutputLock first(path, "--result-filename");
    try {
      OutputLock second(path, "--result-filename");
      ADD_FAILURE() << "two holders of one path";
    } catch (const Error& e) {
      EXPECT_EQ(e.where(), "--result-filename");
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + path + "' is being written by another process (pid " +
                          std::to_string(::getpid())),
                std::string::npos)
          << what;
    }
    EXPECT_TRUE(fs::exists(first.lock_path()));
  }
  EXPECT_FALSE(fs::exists(path + ".lock"));
  OutputLock again(path);  // free once released
}

TEST(OutputLock, TryHoldStepsAsideOnlyForAnotherHolder) {
  TempDir dir;
  const std::string path = dir.file("result.json");
  std::unique_ptr<OutputLock> first = OutputLock::try_hold(path);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(OutputLock::try_hold(path), nullptr);  // held: no error, no lock
  EXPECT_TRUE(fs::exists(first->lock_path()));     // and the holder's lock file stays
  first.reset();
  EXPECT_NE(OutputLock::try_hold(path), nullptr);
  // Any other failure is still an error naming the place.
  EXPECT_THROW(OutputLock::try_hold(dir.file("no/such/dir/r.json"), "--result-dir"), Error);
}

// The kernel drops a dead holder's lock: a killed run leaves no stale lock.
TEST(OutputLock, KilledHolderLeavesNoStaleLock) {
  TempDir dir;
  const std::string path = dir.file("result.json");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OutputLock held(path);
    char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_THROW(OutputLock refused(path), Error);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(fs::exists(path + ".lock"));  // left by kill -9, but not held
  OutputLock taken(path);
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace servebench::core
