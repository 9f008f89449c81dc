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
#include <optional>
#include <string>
#include <vector>

#include "sim/deploy/deploy.h"
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

// Hears the tokens of the requests one front thread owns; called only on that thread, with the
// tokens due together in due order (a speculative step's tokens of one request are consecutive
// and share their due time).
class TokenSink {
 public:
  virtual void on_tokens_due(const TokenEvent* events, size_t count) = 0;

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

// What a router can match of a prompt: `key` names its first `tokens` tokens (the same key
// means the same tokens); 0 = nothing to match.
struct PromptPrefix {
  uint64_t key = 0;
  int32_t tokens = 0;
};

struct DeploymentShared;

class TokenSchedule {
 public:
  virtual ~TokenSchedule() = default;
  // Called on the front thread that owns `request_id`. "" = accepted: each token will reach
  // that thread's sink when due, the last with `last` set. Otherwise why the request can never
  // be served (answered with HTTP 400), and nothing was added.
  virtual std::string submit(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                             PromptPrefix prefix = {}) = 0;
  // The request ended before its last token (client gone, fault, stop): forget it. Called on
  // the owning front thread.
  virtual void cancel(uint64_t request_id) = 0;
  // Server stop: cancels the timers that front thread `front` runs; called on that thread.
  virtual void stop(size_t front) = 0;
  // Any thread.
  virtual ScheduleStats stats() const = 0;
  // Where a deployment sent the request (kept when routes are kept, from its last token or
  // its cancellation), taken once; nullopt otherwise. Called on the owning front thread.
  virtual std::optional<deploy::RequestRoute> take_route(uint64_t /*request_id*/) {
    return std::nullopt;
  }
};

// The timing model of `options.mode`. Fixed: one model per front thread, paced by that thread
// (seeded seed + thread index). Engine: one shared engine, paced by front thread 0, which hands
// each due batch to the thread that owns the request. Throws core::Error(kUsage) for an unusable
// engine profile.
std::unique_ptr<TokenSchedule> make_model_schedule(const Options& options,
                                                   std::vector<FrontThread> fronts);
// Frontend `frontend` of a deployment, paced by front thread 0; every call into the
// deployment holds `shared.mu`. With `keep_routes`, take_route answers (for the trace).
std::unique_ptr<TokenSchedule> make_deployment_schedule(DeploymentShared& shared, size_t frontend,
                                                        bool keep_routes,
                                                        std::vector<FrontThread> fronts);

}  // namespace servebench::sim::detail
