// The linear step cost of an engine profile (docs/engine-model.md, "Step cost").
#include <cmath>

#include "sim/model/engine.h"

namespace servebench::sim {
namespace {

class LinearCost final : public StepCost {
 public:
  explicit LinearCost(const EngineProfile& p) : profile_(p) {}

  int64_t step_ns(const StepBatch& b) const override {
    // A speculative sequence verifies its drafts in one pass: priced like prompt tokens.
    const int64_t verified_drafts = b.decode_tokens - b.decode_seqs;
    double us =
        profile_.step_overhead_us +
        profile_.per_prefill_token_us * static_cast<double>(b.prefill_tokens + verified_drafts) +
        profile_.per_decode_seq_us * static_cast<double>(b.decode_seqs) +
        profile_.per_context_token_us * static_cast<double>(b.context_tokens);
    return std::llround(us * 1000.0);
  }

 private:
  EngineProfile profile_;
};

}  // namespace

std::shared_ptr<const StepCost> make_linear_cost(const EngineProfile& profile) {
  return std::make_shared<LinearCost>(profile);
}

}  // namespace servebench::sim
