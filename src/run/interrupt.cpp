#include "run/interrupt.h"

#include <signal.h>
#include <unistd.h>

namespace servebench::run {

std::atomic<bool> g_stop{false};
std::atomic<int> g_interrupts{0};

extern "C" void on_sigint(int) {
  if (g_interrupts.fetch_add(1) >= 1) {
    const char msg[] = "\nservebench: interrupted again; exiting now\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(130);
  }
  g_stop.store(true);
  const char msg[] =
      "\nservebench: interrupted; sending no more requests and waiting for those in flight "
      "(Ctrl-C again to exit now)\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
}

}  // namespace servebench::run
