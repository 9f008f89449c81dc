#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace servebench::itest {
namespace {

namespace fs = std::filesystem;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<char*> argv_of(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(SERVEBENCH_BIN));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Outcome run(const RunSpec& spec) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) std::abort();
  std::vector<char*> argv = argv_of(spec.args);
  const double start = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (spec.open_files_limit > 0) {
      const rlimit limit{spec.open_files_limit, spec.open_files_limit};
      if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(126);
    }
    if (spec.file_size_limit > 0) {
      const rlimit limit{spec.file_size_limit, spec.file_size_limit};
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(126);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Outcome o;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  double sigint_at = -1;
  int signals_sent = 0;
  while (open_fds > 0) {
    const double now = now_s();
    if (now - start > spec.timeout_s) {
      kill(pid, SIGKILL);
      o.timed_out = true;
      break;
    }
    if (!spec.sigint_after.empty() && sigint_at < 0 &&
        (o.out.find(spec.sigint_after) != std::string::npos ||
         o.err.find(spec.sigint_after) != std::string::npos)) {
      sigint_at = now + spec.sigint_delay_s;
    }
    if (sigint_at >= 0 && signals_sent < spec.signal_count && now >= sigint_at) {
      kill(pid, spec.signal != 0 ? spec.signal : SIGINT);
      if (signals_sent++ == 0) o.signal_sent_s = now - start;
      sigint_at = now + spec.repeat_after_s;
    }
    if (poll(fds, 2, 20) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? o.out : o.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  o.exit_code = exit_code_of(status);
  o.seconds = now_s() - start;
  return o;
}

namespace {

// Binds 127.0.0.1:port (0 = any); the bound port, or -1. The socket is closed again.
int bind_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  int bound = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    bound = ntohs(addr.sin_port);
  }
  close(fd);
  return bound;
}

}  // namespace

int free_port() {
  return bind_loopback(0);
}

int free_ports(int count) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int first = bind_loopback(0);
    bool all_free = first > 0 && first + count <= 65536;
    for (int i = 1; all_free && i < count; ++i) all_free = bind_loopback(first + i) == first + i;
    if (all_free) return first;
  }
  return free_port();
}

Background::Background(const std::vector<std::string>& args, Command command) {
  log_path_ = (fs::temp_directory_path() / ("servebench-bg-" + std::to_string(getpid()) + "-" +
                                            std::to_string(free_port()) + ".log"))
                  .string();
  std::vector<char*> argv = argv_of(args);
  if (command == Command::kProgram) argv.erase(argv.begin());  // args[0] is the program
  pid_ = fork();
  if (pid_ == 0) {
    int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
}

Background::~Background() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::error_code ec;
  fs::remove(log_path_, ec);
}

bool Background::wait_for_port(int port, double timeout_s) {
  const double start = now_s();
  while (now_s() - start < timeout_s) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (ok) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return false;  // it exited
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string Background::log() const {
  return read_file(log_path_);
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "servebench-it-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) std::abort();
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::vector<std::string> TempDir::files() const {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> TempDir::files_ending(const std::string& suffix) const {
  std::vector<std::string> names = files();
  std::erase_if(names, [&](const std::string& n) { return !n.ends_with(suffix); });
  return names;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) lines.push_back(line);
  return lines;
}

std::optional<double> console_value(const std::string& out, const std::string& label) {
  for (const auto& line : lines_of(out)) {
    if (line.rfind(label, 0) == 0 && line.size() > 40) {
      try {
        return std::stod(line.substr(40));
      } catch (...) {
        return std::nullopt;
      }
    }
  }
  return std::nullopt;
}

}  // namespace servebench::itest
