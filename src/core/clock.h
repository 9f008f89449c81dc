// File: core/clock.h
// The one clock every measurement uses: CLOCK_MONOTONIC in nanoseconds (steady, vDSO, ~35 ns a
// call here). Wall-clock time is only ever a label (result file names, "date" fields).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace servebench::core {

// Nanoseconds on CLOCK_MONOTONIC. The client, the simulator and its trace all use this clock,
// so on one machine their timestamps are directly comparable.
inline int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Seconds since the Unix epoch, for labels only.
inline double wall_seconds() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Local wall time formatted as vLLM names its result files: "%Y%m%d-%H%M%S".
std::string wall_timestamp_compact();

}  // namespace servebench::core
