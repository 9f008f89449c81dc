// File: run/interrupt.h
// SIGINT during a run: the first stops sending (in-flight requests get the drain time), the
// second exits at once; the records file is flushed line by line, so nothing measured is lost.
#pragma once

#include <signal.h>

#include <atomic>

namespace servebench::run {

// Set by the first Ctrl-C (or by a stop rule, sweep.cpp clears it again): send no more.
extern std::atomic<bool> g_stop;
// Ctrl-Cs since the handler was installed fresh.
extern std::atomic<int> g_interrupts;

extern "C" void on_sigint(int);

// Installs the handler for its lifetime.
class SigintHandler {
 public:
  // `fresh`: forget earlier interrupts (not for the second and later of several targets: a
  // Ctrl-C while the first one waits for them must still stop the run).
  explicit SigintHandler(bool fresh) {
    if (fresh) {
      g_stop.store(false);
      g_interrupts.store(0);
    }
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_);
  }
  ~SigintHandler() { sigaction(SIGINT, &previous_, nullptr); }

 private:
  struct sigaction previous_ {};
};

}  // namespace servebench::run
