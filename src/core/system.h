// File: core/system.h
// Process limits shared by the client and the simulator.
#pragma once

#include <cstdint>

namespace servebench::core {

// Raises the soft RLIMIT_NOFILE to the hard limit (every open stream is a socket, and the
// usual soft default of 1,024 is far below 10,000 streams). Returns the soft limit in force
// afterwards.
uint64_t raise_open_files_limit();

// Grows this process's descriptor table to hold at least `count` descriptors (bounded by the
// open-files limit), before a run. Growing it later, when a new socket crosses a power of two,
// waits for an RCU grace period in a threaded process: 5-20 ms here, during which the thread
// that opened the socket sends and reads nothing. Returns the table size reached (FDSize).
uint64_t reserve_descriptor_table(uint64_t count);

// Makes the calling thread yield to the other threads of its core, for work beside a
// latency-critical thread on a shared core: nice 19 with a 0.1 ms slice where the kernel takes
// one (Linux >= 6.12), else SCHED_IDLE, else nice 19. core.cpp says why not SCHED_IDLE first.
void make_this_thread_background();

}  // namespace servebench::core
