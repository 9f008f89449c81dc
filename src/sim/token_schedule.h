// File: sim/token_schedule.h (private to the sim part)
// The boundary between the HTTP front (connections, SSE, faults, trace) and whatever decides
// when each token is due. The front submits each accepted generation to a TokenSchedule and
// later hears, on the I/O thread that owns the request, each token as it falls due. Today's
// schedule is a timing model paced by a timer (make_model_schedule); a deployment (replicas
// behind a router, disaggregated prefill/decode) is another TokenSchedule, and the front does
// not change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model/timing_model.h"

namespace boost::asio {
class io_context;
}

namespace servebench::sim {
struct Options;
}

namespace servebench::sim::detail {

// A request id carries the index of the front thread that owns it in its top bits, so a
// schedule finds where to deliver a token without a lookup.
constexpr int kFrontShift = 48;
inline uint64_t make_request_id(size_t front, uint64_t sequence) {
  return (static_cast<uint64_t>(front) << kFrontShift) | sequence;
}
inline size_t front_of(uint64_t request_id) {
  return static_cast<size_t>(request_id >> kFrontShift);
}

// Hears the tokens of the requests one front thread owns; called only on that thread.
class TokenSink {
 public:
  virtual void on_token_due(const TokenEvent& ev) = 0;

 protected:
  ~TokenSink() = default;
};

// One I/O thread of the front, as a schedule sees it: where to run timers and deliver tokens.
struct FrontThread {
  boost::asio::io_context* ioc;
  TokenSink* sink;
};

// The engine gauges of /metrics: summed over engines, the KV usage of the fullest.
struct ScheduleStats {
  int64_t running = 0;
  int64_t waiting = 0;
  uint64_t preemptions = 0;
  double kv_cache_usage = 0;
};

class TokenSchedule {
 public:
  virtual ~TokenSchedule() = default;
  // Called on the front thread that owns `request_id`. "" = accepted: each token will reach
  // that thread's sink when due, the last with `last` set. Otherwise why the request can never
  // be served (answered with HTTP 400), and nothing was added.
  virtual std::string submit(uint64_t request_id, RequestShape shape, int64_t arrival_ns) = 0;
  // The request ended before its last token (client gone, fault, stop): forget it. Called on
  // the owning front thread.
  virtual void cancel(uint64_t request_id) = 0;
  // Server stop: cancels the timers that front thread `front` runs; called on that thread.
  virtual void stop(size_t front) = 0;
  // Any thread.
  virtual ScheduleStats stats() const = 0;
};

// The timing model of `options.mode`. Fixed: one model per front thread, paced by that thread
// (seeded seed + thread index). Engine: one shared engine, paced by front thread 0, which hands
// each due batch to the thread that owns the request. Throws core::Error(kUsage) for an unusable
// engine profile.
std::unique_ptr<TokenSchedule> make_model_schedule(const Options& options,
                                                   std::vector<FrontThread> fronts);

}  // namespace servebench::sim::detail
