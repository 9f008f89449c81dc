// File: tests/integration/harness.h
// Running the real binary: a child process with captured stdout/stderr and a deadline, an
// optional SIGINT once stdout shows a given line, background servers, temp directories, and
// reading the console block.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace servebench::itest {

struct Outcome {
  int exit_code = -1;  // 128 + signal when killed by one
  bool timed_out = false;
  double seconds = 0;
  // Seconds from the start to the first signal sent (RunSpec::sigint_after); -1 when none.
  double signal_sent_s = -1;
  std::string out, err;
};

struct RunSpec {
  std::vector<std::string> args;  // after the binary
  double timeout_s = 60;
  // When set: SIGINT the child `sigint_delay_s` after its stdout (or stderr) first contains
  // this text.
  std::string sigint_after;
  double sigint_delay_s = 0;
  // When > 0: the child's open-files limit, soft and hard (as `ulimit -n N` sets it).
  unsigned long open_files_limit = 0;
  // When > 0: the child's file size limit in bytes (RLIMIT_FSIZE, as `ulimit -f` sets it): a
  // write past it fails with EFBIG (or kills with SIGXFSZ unless the child ignores it).
  unsigned long long file_size_limit = 0;
  // The signal `sigint_after` sends (SIGINT unless set), and how many times: a second one
  // `repeat_after_s` after the first.
  int signal = 0;
  int signal_count = 1;
  double repeat_after_s = 0.5;
};

Outcome run(const RunSpec& spec);
inline Outcome run(std::vector<std::string> args, double timeout_s = 60) {
  RunSpec spec;
  spec.args = std::move(args);
  spec.timeout_s = timeout_s;
  return run(spec);
}

// A loopback TCP port nobody listens on right now.
int free_port();
// The first of `count` consecutive loopback ports nobody listens on right now (a deployment
// serves its frontends at port, port + 1, …).
int free_ports(int count);

// A `servebench sim` (or other) process in the background; stopped with SIGTERM when destroyed.
// `args` follow the servebench binary, or with kProgram they are a whole command (args[0] found
// on $PATH, e.g. python3).
class Background {
 public:
  enum class Command { kServebench, kProgram };
  explicit Background(const std::vector<std::string>& args, Command command = Command::kServebench);
  ~Background();
  // Waits until 127.0.0.1:port accepts connections; false after timeout_s.
  bool wait_for_port(int port, double timeout_s);
  std::string log() const;  // its stderr so far
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// A fresh directory under $TMPDIR, removed when destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const;  // names, sorted
  // The names ending in `suffix`, sorted ("" for none).
  std::vector<std::string> files_ending(const std::string& suffix) const;

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
std::vector<std::string> lines_of(const std::string& text);
// The value of a "{:<40} {:<10}" console line of vLLM's block, e.g. "Successful requests:".
std::optional<double> console_value(const std::string& out, const std::string& label);

}  // namespace servebench::itest
