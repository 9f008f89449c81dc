// File: core/system.h
// Process limits shared by the client and the simulator.
#pragma once

#include <cstdint>

namespace servebench::core {

// Raises the soft RLIMIT_NOFILE to the hard limit (every open stream is a socket, and the
// usual soft default of 1,024 is far below 10,000 streams). Returns the soft limit in force
// afterwards.
uint64_t raise_open_files_limit();

}  // namespace servebench::core
