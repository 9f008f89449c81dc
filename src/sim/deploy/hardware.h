// File: sim/deploy/hardware.h
// Facts a simulated deployment is built from: model shapes (built-in, or a Hugging Face
// config.json), GPUs and links (built-in datasheet figures, or given), and the roofline step
// cost of one worker (docs/deployments.md, "Cost model"). The cost is a StepCost, so the
// engine of sim/model prices its steps with it. Pure arithmetic; no I/O except reading a
// config.json.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/engine.h"

namespace servebench::sim::deploy {

// A transformer's shape, as config.json names it (in brackets where it differs).
struct ModelShape {
  std::string name;
  int32_t layers = 0;  // num_hidden_layers
  int32_t hidden = 0;  // hidden_size
  int32_t heads = 0;   // num_attention_heads
  int32_t kv_heads = 0;
  int32_t head_dim = 0;  // hidden / heads unless given
  int64_t intermediate = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  // Mixture of experts (experts == 0: dense).
  int32_t experts = 0;            // routed experts (n_routed_experts, num_experts)
  int32_t experts_per_token = 0;  // num_experts_per_tok
  int32_t shared_experts = 0;     // n_shared_experts
  int32_t dense_layers = 0;       // first_k_dense_replace: leading layers with a dense MLP
  int64_t moe_intermediate = 0;   // moe_intermediate_size
  // Multi-head latent attention (kv_lora_rank == 0: grouped-query attention).
  int32_t q_lora_rank = 0;
  int32_t kv_lora_rank = 0;
  int32_t qk_rope_head_dim = 0;
  int32_t qk_nope_head_dim = 0;
  int32_t v_head_dim = 0;
  int32_t bytes_per_param = 2;  // bf16; 1 for fp8 weights (and fp8 GEMMs)
};

// What the cost model needs, derived from a shape.
struct ModelSizes {
  double weight_bytes = 0;                        // every parameter
  double expert_weight_bytes = 0;                 // the routed experts' share of weight_bytes
  double matmul_params_per_token = 0;             // active per token, without embedding and lm_head
  double lm_head_params = 0;                      // vocab × hidden, charged per sampled token
  double kv_bytes_per_token_per_layer = 0;        // K+V (GQA), or the MLA latent
  double attention_flops_per_pair_per_layer = 0;  // per (query, key) pair, all heads
};
ModelSizes model_sizes(const ModelShape& model);

std::optional<ModelShape> builtin_model(std::string_view name);
std::vector<std::string> builtin_model_names();
// Reads a config.json; throws core::Error(kInput) naming the file and the key.
ModelShape model_from_hf_config(const std::string& path);
// config.json of `org/name` in the local Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub or
// ~/.cache/huggingface/hub), or "" when it is not there.
std::string find_hf_cached_config(const std::string& repo_id);

struct Link {
  std::string name;
  double bytes_per_s = 0;  // per direction, per GPU
  int64_t latency_ns = 0;
};

struct Gpu {
  std::string name;
  double hbm_bytes_per_s = 0;
  double bf16_flops = 0;  // dense
  double fp8_flops = 0;   // dense; 0: no fp8
  double memory_bytes = 0;
  int32_t sms = 0;
  Link intra_node;  // between GPUs of one node: NVLink, or PCIe
};

std::optional<Gpu> builtin_gpu(std::string_view name);
std::vector<std::string> builtin_gpu_names();
// infiniband, infiniband-ndr, roce, ethernet, pcie4, pcie5 ("nvlink" is the GPU's own).
std::optional<Link> builtin_link(std::string_view name);

struct Efficiency {
  double bandwidth = 0.8;        // of HBM bandwidth (InferSim, AIConfigurator use 0.8)
  double decode_compute = 0.6;   // of dense FLOPS, skinny decode GEMMs
  double prefill_compute = 0.8;  // of dense FLOPS, prefill GEMMs and attention
  double network = 0.8;          // of a link's bandwidth
};

struct StepOverheads {
  double step_us = 5000;          // per step and PP stage: launches, scheduling, sampling
  double per_seq_us = 100;        // per decoding sequence
  double allreduce_us = 20;       // latency of one TP all-reduce
  double draft_us_per_token = 0;  // proposing one speculative token
};

// One worker replica as the cost model sees it.
struct WorkerHardware {
  ModelShape model;
  Gpu gpu;
  int32_t tp = 1;
  int32_t pp = 1;
  Link tp_link;               // the all-reduce's link (NVLink in a node)
  std::vector<Link> pp_hops;  // pp - 1 links between consecutive stages
  Efficiency efficiency;
  StepOverheads overheads;
  double compute_share = 1.0;  // fraction of the SMs (a fixed SM partition)
};

// The parts of one step's time, in ns (total = the step's duration).
struct StepBreakdown {
  double weights_ns = 0;    // reading one stage's weights (the memory side of the GEMMs)
  double compute_ns = 0;    // the GEMMs' FLOPs (the compute side)
  double attention_ns = 0;  // KV reads of decodes + attention FLOPs of prefill chunks
  double tp_ns = 0;         // all-reduces
  double pp_ns = 0;         // hops between stages
  double overhead_ns = 0;   // per step and per sequence
  double total_ns = 0;
};

StepBreakdown roofline_step(const WorkerHardware& hw, const StepBatch& batch);
std::shared_ptr<const StepCost> make_roofline_cost(const WorkerHardware& hw);

// Bytes one GPU moves per token a step computes (the traffic the cost model prices): over the
// TP all-reduces of its stage (a ring: 2 (tp-1)/tp of the activations, twice per layer), and
// over one PP hop (the activations of the token, sent by each GPU of a stage to its peer).
double allreduce_bytes_per_token_per_gpu(const WorkerHardware& hw);
double pp_hop_bytes_per_token_per_gpu(const WorkerHardware& hw);

// KV bytes one GPU holds per token, and a whole request's KV bytes moved between workers.
double kv_bytes_per_token_per_gpu(const ModelShape& model, int32_t tp, int32_t pp);
double kv_bytes_per_token(const ModelShape& model);

}  // namespace servebench::sim::deploy
