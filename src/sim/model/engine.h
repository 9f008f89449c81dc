// File: sim/model/engine.h
// The continuous-batching engine as a building block: what one scheduler step costs is asked
// of a StepCost (the linear profile costs, or a roofline model of a GPU deployment made by
// sim/deploy), and an Engine offers what compositions need beyond TimingModel: requests that
// arrive with KV already in place (imported from a prefill worker, or a prefix-cache hit),
// speculative decoding, and counters for /metrics. Pure logic on ns timestamps, like
// timing_model.h; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/model/timing_model.h"

namespace servebench::sim {

// One step's work, summed over the sequences it schedules: everything a cost model prices.
struct StepBatch {
  int64_t prefill_tokens = 0;           // prompt, recompute and imported-KV tokens computed
  int64_t prefill_seqs = 0;             // sequences computing prefill chunks
  int64_t prefill_attention_pairs = 0;  // Σ n·c + n²/2 over chunks of n tokens after c
  int64_t decode_seqs = 0;              // sequences decoding
  int64_t decode_tokens = 0;            // tokens they compute: 1 each, 1 + drafts with spec
  int64_t decode_context_tokens = 0;    // Σ KV tokens the decoding sequences read
  int64_t context_tokens = 0;           // Σ KV length after the step, every scheduled sequence
  int64_t sampling_seqs = 0;            // sequences that sample a token at the step's end
  int64_t draft_tokens = 0;             // speculative tokens proposed in the step
  int64_t start_ns = 0;                 // when the step starts (shared GPUs ask who is busy)
};

// Prices a step. Implementations: the linear profile costs below; sim/deploy's roofline.
class StepCost {
 public:
  virtual ~StepCost() = default;
  virtual int64_t step_ns(const StepBatch& batch) const = 0;
};

// EngineProfile's linear costs (docs/engine-model.md): overhead + prefill tokens + decoding
// sequences + context tokens; a speculative sequence's extra verified tokens cost as prefill.
std::shared_ptr<const StepCost> make_linear_cost(const EngineProfile& profile);

// Speculative decoding on an engine: each decoding sequence verifies `draft_tokens` proposals
// per step; proposal i is accepted with probability acceptance_rate if all before it were
// (vLLM counts acceptance per position), so a step yields 1 + accepted tokens.
struct SpecDecode {
  int32_t draft_tokens = 0;  // 0: off
  double acceptance_rate = 0;
  uint64_t seed = 0;
};

// Totals since construction, for /metrics (vLLM's names in brackets).
struct EngineCounters {
  uint64_t prompt_tokens = 0;         // prefill tokens computed (vllm:prompt_tokens_total)
  uint64_t generation_tokens = 0;     // tokens sampled (vllm:generation_tokens_total)
  uint64_t finished_requests = 0;     // (vllm:request_success_total)
  uint64_t spec_drafts = 0;           // (vllm:spec_decode_num_drafts_total)
  uint64_t spec_draft_tokens = 0;     // (vllm:spec_decode_num_draft_tokens_total)
  uint64_t spec_accepted_tokens = 0;  // (vllm:spec_decode_num_accepted_tokens_total)
  std::vector<uint64_t> spec_accepted_per_position;  // (..._accepted_tokens_per_pos_total)
  int64_t busy_ns = 0;                               // Σ step durations (GPU utilization)
};

class Engine : public TimingModel {
 public:
  // add() for a request whose first `computed_tokens` prompt tokens already have KV here
  // (0 ≤ computed_tokens < prompt): it computes the rest, then samples its first token.
  virtual void add_with_kv(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                           int32_t computed_tokens) = 0;
  virtual EngineCounters counters() const = 0;
  // Whether a step that starts at now_ns would have work: running or waiting requests, or
  // an arrival at or before now_ns.
  virtual bool busy_at(int64_t now_ns) const = 0;
  // Requests added and not yet finished or cancelled.
  virtual int32_t outstanding() const = 0;
  virtual int32_t num_gpu_blocks() const = 0;
};

// Throws core::Error(kUsage) naming the field if the scheduler limits are unusable.
std::unique_ptr<Engine> make_engine(const EngineProfile& scheduler,
                                    std::shared_ptr<const StepCost> cost, SpecDecode spec = {});

}  // namespace servebench::sim
