// The roofline step cost of one worker (docs/deployments.md, "Cost model"), after the
// step-time model of ../shared/research/sim-calibration.md: GEMMs as max(weights / bandwidth,
// FLOPs / compute) with efficiencies (InferSim's and BLIS's roofline form), attention over the
// batch's context, two TP all-reduces per layer, PP stages run one after another with a hop
// between them (vLLM gained nothing from pipelining in seed 000), fixed per-step and
// per-sequence overheads. MoE reads the experts a batch is expected to touch.
#include <cmath>

#include "sim/deploy/hardware.h"

namespace servebench::sim::deploy {
namespace {

constexpr double kActivationBytes = 2;  // bf16 activations cross the links

StepBreakdown step_of(const WorkerHardware& hw, const ModelSizes& sizes, const StepBatch& b);

// Prices every step of one worker; the model's sizes are worked out once.
class RooflineCost final : public StepCost {
 public:
  explicit RooflineCost(WorkerHardware hw) : hw_(std::move(hw)), sizes_(model_sizes(hw_.model)) {}
  int64_t step_ns(const StepBatch& batch) const override {
    return std::llround(step_of(hw_, sizes_, batch).total_ns);
  }

 private:
  WorkerHardware hw_;
  ModelSizes sizes_;
};

StepBreakdown step_of(const WorkerHardware& hw, const ModelSizes& sizes, const StepBatch& b) {
  const ModelShape& m = hw.model;
  const double gpus = static_cast<double>(hw.tp) * hw.pp;
  const double tokens = static_cast<double>(b.prefill_tokens + b.decode_tokens);
  const double bandwidth = hw.gpu.hbm_bytes_per_s * hw.efficiency.bandwidth;
  const bool fp8 = m.bytes_per_param == 1 && hw.gpu.fp8_flops > 0;
  const double flops = (fp8 ? hw.gpu.fp8_flops : hw.gpu.bf16_flops) * hw.compute_share;
  const Efficiency& eff = hw.efficiency;

  // Each of N tokens picks k of E experts: a given expert is idle with (1 - k/E)^N.
  double expert_fraction = 1;
  if (m.experts > 0) {
    expert_fraction =
        1 - std::pow(1 - static_cast<double>(m.experts_per_token) / m.experts, tokens);
  }
  const double weight_bytes =
      sizes.weight_bytes - sizes.expert_weight_bytes + sizes.expert_weight_bytes * expert_fraction;
  const double s_to_ns = 1e9;

  StepBreakdown out;
  // Per stage and GPU; the stages are alike and run one after another.
  const double weights_stage = weight_bytes / gpus / bandwidth * s_to_ns;
  const double gemm_flops_prefill = 2 * sizes.matmul_params_per_token * b.prefill_tokens;
  const double gemm_flops_decode = 2 * sizes.matmul_params_per_token * b.decode_tokens +
                                   2 * sizes.lm_head_params * b.sampling_seqs;
  const double compute_stage =
      (gemm_flops_prefill / eff.prefill_compute + gemm_flops_decode / eff.decode_compute) / gpus /
      flops * s_to_ns;

  const double layers_stage = static_cast<double>(m.layers) / hw.pp;
  const int32_t kv_shards = m.kv_lora_rank > 0 ? 1 : std::min(hw.tp, m.kv_heads);
  const double decode_read_s = static_cast<double>(b.decode_context_tokens) *
                               sizes.kv_bytes_per_token_per_layer / kv_shards / bandwidth;
  const double decode_flops_s = static_cast<double>(b.decode_context_tokens) *
                                sizes.attention_flops_per_pair_per_layer / hw.tp /
                                (flops * eff.decode_compute);
  const double prefill_flops_s = static_cast<double>(b.prefill_attention_pairs) *
                                 sizes.attention_flops_per_pair_per_layer / hw.tp /
                                 (flops * eff.prefill_compute);
  const double attention_stage =
      layers_stage * (std::max(decode_read_s, decode_flops_s) + prefill_flops_s) * s_to_ns;

  double tp_stage = 0;
  if (hw.tp > 1) {
    const double bytes = 2.0 * (hw.tp - 1) / hw.tp * tokens * m.hidden * kActivationBytes;
    tp_stage = 2 * layers_stage *
               (hw.overheads.allreduce_us * 1e3 +
                bytes / (hw.tp_link.bytes_per_s * eff.network) * s_to_ns);
  }
  const double overhead_stage =
      (hw.overheads.step_us + hw.overheads.per_seq_us * static_cast<double>(b.decode_seqs)) * 1e3;

  for (const Link& hop : hw.pp_hops) {
    out.pp_ns += static_cast<double>(hop.latency_ns) +
                 tokens * m.hidden * kActivationBytes / (hop.bytes_per_s * eff.network) * s_to_ns;
  }
  out.weights_ns = weights_stage * hw.pp;
  out.compute_ns = compute_stage * hw.pp;
  out.attention_ns = attention_stage * hw.pp;
  out.tp_ns = tp_stage * hw.pp;
  out.overhead_ns = overhead_stage * hw.pp +
                    hw.overheads.draft_us_per_token * 1e3 * static_cast<double>(b.draft_tokens);
  out.total_ns = std::max(out.weights_ns, out.compute_ns) + out.attention_ns + out.tp_ns +
                 out.pp_ns + out.overhead_ns;
  return out;
}

}  // namespace

StepBreakdown roofline_step(const WorkerHardware& hw, const StepBatch& batch) {
  return step_of(hw, model_sizes(hw.model), batch);
}

double allreduce_bytes_per_token_per_gpu(const WorkerHardware& hw) {
  if (hw.tp <= 1) return 0;
  const double layers_stage = static_cast<double>(hw.model.layers) / hw.pp;
  return 2 * layers_stage * 2.0 * (hw.tp - 1) / hw.tp * hw.model.hidden * kActivationBytes;
}

double pp_hop_bytes_per_token_per_gpu(const WorkerHardware& hw) {
  return hw.pp <= 1 ? 0 : static_cast<double>(hw.model.hidden) * kActivationBytes;
}

std::shared_ptr<const StepCost> make_roofline_cost(const WorkerHardware& hw) {
  return std::make_shared<RooflineCost>(hw);
}

}  // namespace servebench::sim::deploy
