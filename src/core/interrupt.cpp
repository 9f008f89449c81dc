// SIGINT/SIGTERM as a flag and an eventfd (interrupt.h).
#include "core/interrupt.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/error.h"

namespace servebench::core {
namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
std::atomic<bool> g_installed{false};
int g_fd = -1;            // written once, before the handler is installed
const char* g_note = "";  // likewise

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;
  if (g_count.fetch_add(1) >= 1) {
    const char msg[] =
        "\nservebench: interrupted again; exiting now (the records file keeps every line "
        "written so far; no summary, no result)\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(128 + sig);
  }
  g_signal.store(sig);
  if (g_fd >= 0) {
    const uint64_t one = 1;
    (void)!write(g_fd, &one, sizeof one);
  }
  const char* what = sig == SIGTERM ? "\nservebench: terminated (SIGTERM); "
                                    : "\nservebench: interrupted (SIGINT); ";
  const char tail[] = " (a second signal exits at once)\n";
  (void)!write(STDERR_FILENO, what, strlen(what));
  (void)!write(STDERR_FILENO, g_note, strlen(g_note));
  (void)!write(STDERR_FILENO, tail, sizeof tail - 1);
  errno = saved_errno;
}

}  // namespace

void install_interrupt_handler(const char* note) {
  if (g_installed.exchange(true)) return;
  g_note = note;
  g_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  // Blocking calls resume; every wait that matters polls interrupt_fd() or the flag.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

bool interrupt_handler_installed() {
  return g_installed.load();
}

int interrupt_signal() {
  return g_signal.load(std::memory_order_relaxed);
}

int interrupt_exit_code() {
  const int sig = interrupt_signal();
  return sig == 0 ? 0 : 128 + sig;
}

const char* interrupt_name() {
  switch (interrupt_signal()) {
    case 0:
      return "";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    default:
      return "a signal";
  }
}

int interrupt_fd() {
  return g_fd;
}

bool sleep_unless_interrupted(int64_t ns) {
  const int64_t until = mono_ns() + ns;
  for (;;) {
    if (interrupted()) return false;
    const int64_t left = until - mono_ns();
    if (left <= 0) return true;
    // Without the eventfd (no handler): plain slices, still looking at the flag.
    const int ms = static_cast<int>(std::min<int64_t>((left + 999'999) / 1'000'000, 100));
    if (g_fd >= 0) {
      pollfd p{g_fd, POLLIN, 0};
      (void)::poll(&p, 1, ms);
    } else {
      usleep(static_cast<useconds_t>(ms) * 1000);
    }
  }
}

void throw_if_interrupted(const std::string& phase) {
  if (!interrupted()) return;
  throw Interrupted(phase, std::string("stopped by ") + interrupt_name() +
                               "; the main run was not started (nothing of it was sent)");
}

int Interrupted::exit_code() const {
  const int code = interrupt_exit_code();
  return code != 0 ? code : 130;
}

void reset_interrupt_for_testing() {
  g_signal.store(0);
  g_count.store(0);
  if (g_fd >= 0) {
    uint64_t value = 0;
    (void)!read(g_fd, &value, sizeof value);
  }
}

}  // namespace servebench::core
