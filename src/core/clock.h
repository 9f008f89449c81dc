// File: core/clock.h
// The one clock every measurement uses: CLOCK_MONOTONIC in nanoseconds (steady, vDSO, ~35 ns a
// call here). Wall-clock time is only ever a label (result file names, "date" fields, vLLM's
// rps_change_events timestamps).
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

// CLOCK_REALTIME in ns at the moment CLOCK_MONOTONIC read `mono`: both clocks are read now,
// side by side, and the monotonic distance carried back (a wall-clock step since then is not
// followed). Turns a run's t0 into the wall time of its requests.
int64_t wall_ns_at_mono(int64_t mono);

// A CLOCK_REALTIME time in ns as local time, the way Python's datetime.now().isoformat() writes
// it: "2025-01-31T14:05:09.123456", microseconds truncated, and left out when they are 0.
std::string local_iso_timestamp(int64_t wall_ns);

}  // namespace servebench::core
