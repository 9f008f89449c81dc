// The roofline step cost against the research document's hand checks
// (../shared/research/sim-calibration.md, section 3) and its shape.
#include <gtest/gtest.h>

#include "sim/deploy/hardware.h"

namespace servebench::sim::deploy {
namespace {

// `model` on `tp` GPUs of `gpu` in one node.
WorkerHardware on_one_node(const char* model, const char* gpu, int32_t tp) {
  WorkerHardware hw;
  hw.model = *builtin_model(model);
  hw.gpu = *builtin_gpu(gpu);
  hw.tp = tp;
  hw.tp_link = hw.gpu.intra_node;
  return hw;
}

// Qwen3-32B on 4 × H20 with NVLink, the efficiencies and overheads of seed 004's check.
WorkerHardware qwen_h20_tp4() {
  WorkerHardware hw = on_one_node("Qwen3-32B", "H20", 4);
  hw.tp_link.bytes_per_s = 360e9 / 0.8;  // the check's 360 GB/s effective
  hw.overheads = StepOverheads{4400, 100, 15, 0};
  return hw;
}

StepBatch decode(int64_t seqs, int64_t context) {
  StepBatch b;
  b.decode_seqs = seqs;
  b.decode_tokens = seqs;
  b.sampling_seqs = seqs;
  b.decode_context_tokens = seqs * context;
  b.context_tokens = seqs * (context + 1);
  return b;
}

TEST(Roofline, QwenOnH20DecodeMatchesTheHandCheck) {
  StepBreakdown s = roofline_step(qwen_h20_tp4(), decode(1, 3075));
  EXPECT_NEAR(s.weights_ns / 1e6, 5.12, 0.05);  // 16.38 GB per GPU at 3.2 TB/s
  EXPECT_NEAR(s.tp_ns / 1e6, 1.93, 0.05);       // 128 all-reduces
  EXPECT_LT(s.compute_ns, s.weights_ns);        // memory-bound at batch 1
  EXPECT_NEAR(s.total_ns / 1e6, 11.6, 0.3);     // with 4.4 ms per step and 0.1 ms per sequence
}

TEST(Roofline, QwenOnH20PrefillOf3000TokensMatchesTheHandCheck) {
  WorkerHardware hw = qwen_h20_tp4();
  StepBatch b;
  b.prefill_tokens = 3000;
  b.prefill_seqs = 1;
  b.prefill_attention_pairs = 3000LL * 3000 / 2;
  b.sampling_seqs = 1;
  StepBreakdown s = roofline_step(hw, b);
  EXPECT_NEAR(s.compute_ns / 1e6, 395, 10);
  EXPECT_NEAR(s.attention_ns / 1e6, 20, 1.5);
  EXPECT_NEAR(s.tp_ns / 1e6, 18, 1.5);
  EXPECT_NEAR(s.total_ns / 1e6, 438, 12);  // the check's 463 ms less its 25 ms per request
}

TEST(Roofline, DecodeTurnsComputeBoundOnH20BetweenBatch16And64) {
  WorkerHardware hw = qwen_h20_tp4();
  EXPECT_LT(roofline_step(hw, decode(16, 1500)).compute_ns,
            roofline_step(hw, decode(16, 1500)).weights_ns);
  EXPECT_GT(roofline_step(hw, decode(64, 1500)).compute_ns,
            roofline_step(hw, decode(64, 1500)).weights_ns);
  // Below the ridge a step hardly grows with the batch; above it, about linearly.
  auto ms = [&](int64_t batch) { return roofline_step(hw, decode(batch, 1500)).total_ns / 1e6; };
  EXPECT_LT(ms(16) / ms(1), 1.3);
  EXPECT_GT(ms(128) - ms(64), 2 * (ms(16) - ms(1)));
}

TEST(Roofline, A100Tp8StaysMemoryBoundAtBatch100) {
  WorkerHardware hw = on_one_node("Llama-3.1-70B", "A100-40GB", 8);
  StepBreakdown s = roofline_step(hw, decode(100, 320));
  EXPECT_LT(s.compute_ns, s.weights_ns);
  EXPECT_NEAR(roofline_step(hw, decode(1, 320)).weights_ns / 1e6, 14.18, 0.1);
}

TEST(Roofline, MoeReadsTheExpertsABatchIsExpectedToTouch) {
  WorkerHardware hw = on_one_node("DeepSeek-V2.5", "H100", 8);
  ModelSizes sizes = model_sizes(hw.model);
  const double dense = (sizes.weight_bytes - sizes.expert_weight_bytes) / 8 / (3350e9 * 0.8);
  const double experts = sizes.expert_weight_bytes / 8 / (3350e9 * 0.8);
  // 1 − (1 − 6/160)^B: 3.75 %, 45.7 %, 91.3 % of the experts at B = 1, 16, 64.
  for (auto [batch, fraction] : {std::pair{1, 0.0375}, {16, 0.457}, {64, 0.913}}) {
    double ns = roofline_step(hw, decode(batch, 1000)).weights_ns;
    EXPECT_NEAR(ns / 1e9, dense + experts * fraction, 0.002 * (dense + experts)) << batch;
  }
}

TEST(Roofline, PipelineStagesRunInTurnAndTheHopCostsItsLink) {
  WorkerHardware tp8 = on_one_node("Llama-3.1-70B", "A100-40GB", 8);
  WorkerHardware pp2 = tp8;
  pp2.tp = 4;
  pp2.pp = 2;
  pp2.pp_hops = {*builtin_link("infiniband")};
  // Seed 000's check: 23.0 ms for TP8, 42.0 ms for TP4 × PP2, at batch 5.
  double one = roofline_step(tp8, decode(5, 320)).total_ns / 1e6;
  double two = roofline_step(pp2, decode(5, 320)).total_ns / 1e6;
  EXPECT_NEAR(one, 23.0, 1.0);
  EXPECT_NEAR(two, 42.0, 1.5);
  WorkerHardware eth = pp2;
  eth.pp_hops = {*builtin_link("ethernet")};
  StepBatch prefill;
  prefill.prefill_tokens = 8192;
  prefill.prefill_seqs = 4;
  EXPECT_GT(roofline_step(eth, prefill).pp_ns, 5 * roofline_step(pp2, prefill).pp_ns);
}

}  // namespace
}  // namespace servebench::sim::deploy
