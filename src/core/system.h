// File: core/system.h
// Process limits shared by the client and the simulator.
#pragma once

#include <cstdint>

namespace servebench::core {

// Raises the soft RLIMIT_NOFILE to the hard limit (every open stream is a socket, and the
// usual soft default of 1,024 is far below 10,000 streams). Returns the soft limit in force
// afterwards.
uint64_t raise_open_files_limit();

// Makes the calling thread run only when its core has nothing else to do (SCHED_IDLE; nice 19
// where that is refused), for work beside a latency-critical thread on a shared core: a woken
// normal thread preempts an idle-policy one at once, where a nice-19 thread may still finish
// its slice first (milliseconds under EEVDF's run-to-parity).
void run_this_thread_when_idle();

}  // namespace servebench::core
