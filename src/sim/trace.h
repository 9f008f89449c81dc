// File: sim/trace.h (private to the sim part)
// The --trace-out ground truth: one JSON line per generation request (admitted or rejected)
// with its server-side times: arrival, each token's due and send time, end, outcome, fault.
// docs/simulator.md lists the fields.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace servebench::sim::detail {

struct Stream;

// One file shared by every front thread; lines are written whole under a mutex.
class TraceWriter {
 public:
  // Throws core::Error(kInput) naming `flag` and `path` when the file cannot be opened.
  TraceWriter(const std::string& path, const std::string& flag);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // The line of a request that ended at end_ns with HTTP `status` (0: no status was sent).
  void write(const Stream& s, int status, const char* outcome, int64_t end_ns);
  void flush();

 private:
  std::mutex mu_;
  FILE* file_ = nullptr;
};

}  // namespace servebench::sim::detail
