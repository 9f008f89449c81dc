// File: core/interrupt.h
// SIGINT and SIGTERM, one mechanism for every phase of a command that measures (`run`,
// `latency`, `throughput`, `suite`, `sim`): main installs the handler once; the first signal
// only sets a flag (and makes interrupt_fd() readable), which the client's event loop, the
// ready check, prompt building, waits and sleeps look at, so each phase stops in its own way
// (docs/reliability.md, "Signals"); a second signal exits at once with 128 + its number.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/error.h"

namespace servebench::core {

// Installs the SIGINT/SIGTERM handler for the rest of the process (idempotent: the first call's
// `note` stays). The first signal prints "servebench: interrupted (SIGINT); <note> (a second
// signal exits at once)"; `note` must outlive the process (a literal). SIGPIPE is ignored too:
// a peer that closed its socket is a failed request, not a dead benchmark.
void install_interrupt_handler(
    const char* note = "sending no more requests; those in flight get the drain time");
// Whether the handler is installed (commands without it keep the default: die at once).
bool interrupt_handler_installed();

// The first SIGINT/SIGTERM's number since the handler was installed; 0 before any.
int interrupt_signal();
inline bool interrupted() {
  return interrupt_signal() != 0;
}
// 130 after SIGINT, 143 after SIGTERM (128 + the signal, as a shell reports it); 0 before any.
int interrupt_exit_code();
// "SIGINT", "SIGTERM" ("" before any).
const char* interrupt_name();

// A descriptor that becomes readable at the first signal and stays so (an eventfd that is never
// read): poll it beside sockets or pipes to wake at once. -1 without the handler.
int interrupt_fd();

// Sleeps up to `ns` nanoseconds; returns false at once when a signal arrives (or arrived).
bool sleep_unless_interrupted(int64_t ns);

// What throw_if_interrupted throws: an Error naming the phase, whose exit code is the signal's
// (catch it before Error: Error::exit_code does not know it).
class Interrupted : public Error {
 public:
  Interrupted(std::string phase, const std::string& message)
      : Error(ErrorKind::kInternal, std::move(phase), message) {}
  int exit_code() const;  // 130 after SIGINT, 143 after SIGTERM
};

// After a signal: throws Interrupted whose message says the command stopped in `phase` before
// its main run sent anything; main() prints it and exits 130 or 143.
void throw_if_interrupted(const std::string& phase);

// For tests: forget an earlier signal (the handler stays).
void reset_interrupt_for_testing();

}  // namespace servebench::core
