// File: sim/model/timing_model.h
// Timing models: when does each output token of each request leave the server? The HTTP server
// asks a TimingModel, never computes times itself. Two implementations:
//   - fixed: each request alone, TTFT and ITL drawn from given values/distributions;
//   - engine: a continuous-batching engine (vLLM-like) advanced in real time: FCFS waiting
//     queue, max_num_seqs, max_num_batched_tokens with chunked prefill, a paged KV cache with
//     recompute preemption, and a step-cost model. TTFT, TPOT and throughput emerge from load.
// Everything here is pure logic on ns timestamps passed in by the caller, so tests drive it
// with made-up clocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace servebench::sim {

// Parameters of the engine model; loaded from a YAML profile (profiles/*.yaml).
struct EngineProfile {
  std::string name = "default";
  int32_t max_num_seqs = 256;
  int32_t max_num_batched_tokens = 8192;
  bool chunked_prefill = true;
  int32_t block_size = 16;         // tokens per KV block
  int32_t num_gpu_blocks = 16384;  // KV cache capacity in blocks
  // Step duration = overhead + prefill tokens * per_prefill_token + decoding seqs *
  // per_decode_seq + context tokens attended * per_context_token  (all in microseconds).
  double step_overhead_us = 2000;
  double per_prefill_token_us = 20;
  double per_decode_seq_us = 30;
  double per_context_token_us = 0.01;
};

// Reads a profile file; throws core::Error naming the file and key on bad input.
EngineProfile load_engine_profile(const std::string& path);

// One token leaving the server.
struct TokenEvent {
  uint64_t request_id;
  int32_t token_index;  // 0-based; 0 is the first token
  int64_t due_ns;       // when the model says it is produced
  bool last;            // the request's final token
};

struct RequestShape {
  int32_t prompt_tokens;
  int32_t output_tokens;  // decided by the server (ignore_eos, max_tokens, distribution)
};

// A value drawn per request, in milliseconds (fixed mode's TTFT and ITL).
struct Millis {
  double mean_ms = 0;
  double jitter_ms = 0;  // standard deviation of a normal draw around mean, clamped at 0
};

struct FixedTiming {
  Millis ttft{50, 0};
  Millis itl{10, 0};
  uint64_t seed = 0;
};

struct ModelStats {
  int32_t running = 0;
  int32_t waiting = 0;
  double kv_cache_usage = 0;  // 0..1
  uint64_t preemptions = 0;   // total
  uint64_t steps = 0;         // total
};

// Not thread-safe: the server serializes calls (one mutex, or one owning thread).
class TimingModel {
 public:
  virtual ~TimingModel() = default;
  // Why this model can never serve `shape`, or "" when it can. The engine cannot serve a
  // request whose prompt + output would not fit the whole KV cache (or, without chunked
  // prefill, the token budget): it would wait forever. The server asks before add() and
  // answers such a request with HTTP 400, as vLLM refuses over-long requests. add() of such a
  // shape (or of an id already present) throws core::Error(kInternal).
  virtual std::string rejection_reason(RequestShape /*shape*/) const { return {}; }
  // Engine: the request joins the first step starting at or after arrival_ns, even when add()
  // comes after that step was planned (it is re-planned), as long as the step has not run.
  virtual void add(uint64_t request_id, RequestShape shape, int64_t arrival_ns) = 0;
  // The client went away: forget the request and free what it held (unknown id: no-op).
  virtual void cancel(uint64_t request_id) = 0;
  // Earliest time something is due, or nullopt when idle.
  virtual std::optional<int64_t> next_due_ns() const = 0;
  // Appends every token event due at or before now_ns, in due order, and advances the model.
  // Engine: runs every step ending at or before now_ns; a late caller gets the model's due
  // times unshifted (its lateness is send time - due).
  virtual void pop_due(int64_t now_ns, std::vector<TokenEvent>& out) = 0;
  virtual ModelStats stats() const = 0;
};

// Throws core::Error(kUsage) naming the field if the profile is unusable (e.g. block_size 0).
std::unique_ptr<TimingModel> make_engine_model(const EngineProfile& profile);
// Fixed mode: token k of a request arriving at a is due at a + ttft + sum of k ITL draws.
// Draws come from a stream per request fixed by (seed, how many add() calls came before).
std::unique_ptr<TimingModel> make_fixed_model(const FixedTiming& timing);

}  // namespace servebench::sim
