// A served deployment's server-side truth: each worker replica's vLLM series, and a simulated
// dcgm-exporter for every GPU. GPU figures come from the engines' counters and the cost
// model's traffic per token (hardware.h), sampled when scraped: utilization is Δbusy / Δt
// since the previous scrape, as DCGM's is the share of the last interval a kernel ran.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/json_text.h"
#include "sim/deployment_state.h"
#include "sim/metrics_exposition.h"

namespace servebench::sim::detail {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int64_t kMinSampleNs = 50'000'000;  // closer scrapes repeat the last figures

std::string fmt(double v) {
  char num[64];
  std::snprintf(num, sizeof num, "%.6g", v);
  return num;
}

std::string quoted_label(const char* name, std::string_view value) {
  std::string s = name;
  s += "=\"";
  core::append_json_escaped(s, value);
  s += '"';
  return s;
}

// Board power of a GPU by name (datasheet TDP, W); an unknown one gets 400 W.
double tdp_watts(const std::string& gpu) {
  if (gpu.rfind("H100", 0) == 0 || gpu.rfind("H200", 0) == 0) return 700;
  if (gpu.rfind("L40S", 0) == 0) return 350;
  return 400;  // A100, H20
}

using Tenant = DeploymentShared::Tenant;
using GpuInfo = DeploymentShared::Gpu;

std::vector<GpuInfo> gpu_table(const deploy::Deployment& d) {
  std::vector<GpuInfo> gpus;
  std::vector<size_t> first_of_node;
  for (const deploy::NodeSpec& n : d.nodes) {
    first_of_node.push_back(gpus.size());
    for (int32_t g = 0; g < n.gpus; ++g) gpus.push_back(GpuInfo{&n, g, {}});
  }
  size_t state = 0;
  for (const deploy::WorkerSpec& w : d.workers) {
    const deploy::WorkerHardware& hw = w.hardware;
    const int32_t per_replica = hw.tp * hw.pp;
    bool kv_scale_out = false;
    for (const deploy::RouterSpec& r : d.routers) {
      auto has = [&](const std::vector<std::string>& names) {
        return std::find(names.begin(), names.end(), w.name) != names.end();
      };
      if (r.disaggregated() && (has(r.prefill) || has(r.decode))) {
        kv_scale_out = r.kv_link.name != hw.gpu.intra_node.name;
      }
    }
    for (const auto& slots : w.replica_gpus) {
      for (size_t k = 0; k < slots.size(); ++k) {
        const int32_t stage = static_cast<int32_t>(k) / hw.tp;
        auto node_at = [&](int32_t s, int32_t lane) {
          return slots[static_cast<size_t>(s * hw.tp + lane)].node;
        };
        const int32_t lane = static_cast<int32_t>(k) % hw.tp;
        Tenant t;
        t.state = state;
        t.weight_bytes = deploy::model_sizes(hw.model).weight_bytes / per_replica;
        t.kv_bytes_per_block =
            deploy::kv_bytes_per_token_per_gpu(hw.model, hw.tp, hw.pp) * w.engine.block_size;
        t.compute_share = hw.compute_share;
        t.allreduce_bytes_per_token = deploy::allreduce_bytes_per_token_per_gpu(hw);
        for (int32_t l = 1; l < hw.tp; ++l) {
          t.allreduce_scale_out = t.allreduce_scale_out || node_at(stage, l) != node_at(stage, 0);
        }
        t.hop_bytes_per_token = deploy::pp_hop_bytes_per_token_per_gpu(hw);
        t.sends_hop = stage + 1 < hw.pp;
        t.receives_hop = stage > 0;
        if (t.sends_hop) t.hop_out_scale_out = node_at(stage + 1, lane) != slots[k].node;
        if (t.receives_hop) t.hop_in_scale_out = node_at(stage - 1, lane) != slots[k].node;
        t.kv_share = 1.0 / per_replica;
        t.kv_scale_out = kv_scale_out;
        gpus[first_of_node[static_cast<size_t>(slots[k].node)] + static_cast<size_t>(slots[k].gpu)]
            .tenants.push_back(t);
      }
      ++state;
    }
    // Workers sharing GPUs with a host reuse its slots: replicas beyond them have none.
    state += static_cast<size_t>(
        std::max<int32_t>(0, w.replicas - static_cast<int32_t>(w.replica_gpus.size())));
  }
  return gpus;
}

}  // namespace

std::string worker_exposition(DeploymentShared& shared, size_t frontend,
                              std::string_view served_model_name) {
  const deploy::Deployment& d = shared.spec;
  const std::string& router_name = d.frontends.at(frontend).router;
  std::vector<std::string> reached;
  for (const deploy::RouterSpec& r : d.routers) {
    if (r.name != router_name) continue;
    for (const auto* names : {&r.workers, &r.prefill, &r.decode}) {
      reached.insert(reached.end(), names->begin(), names->end());
    }
  }
  std::vector<deploy::WorkerState> states;
  {
    std::lock_guard lock(shared.mu);
    states = shared.model->worker_states();
  }
  struct Row {
    std::string labels;
    const deploy::WorkerState* state;
    bool spec;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < states.size(); ++i) {
    const deploy::WorkerState& s = states[i];
    if (std::find(reached.begin(), reached.end(), s.worker) == reached.end()) continue;
    bool spec = false;
    for (const deploy::WorkerSpec& w : d.workers) {
      if (w.name == s.worker) spec = w.spec.draft_tokens > 0;
    }
    rows.push_back(Row{"engine=\"" + std::to_string(i) + "\"," +
                           quoted_label("model_name", served_model_name) + "," +
                           quoted_label("worker", s.worker) + ",replica=\"" +
                           std::to_string(s.replica) + "\"",
                       &s, spec});
  }
  std::string out;
  auto each = [&](const char* name, const char* type, const char* help, const char* sample_name,
                  const std::function<std::string(const deploy::WorkerState&)>& value,
                  bool spec_only = false) {
    append_family(out, name, type, help);
    for (const Row& r : rows) {
      if (!spec_only || r.spec) append_sample(out, sample_name, r.labels, value(*r.state));
    }
  };
  using WS = deploy::WorkerState;
  each("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.",
       "vllm:num_requests_running", [](const WS& s) { return std::to_string(s.stats.running); });
  each("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
       "vllm:num_requests_waiting", [](const WS& s) { return std::to_string(s.stats.waiting); });
  each("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
       "vllm:kv_cache_usage_perc", [](const WS& s) { return fmt(s.stats.kv_cache_usage); });
  each("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.",
       "vllm:num_preemptions_total",
       [](const WS& s) { return std::to_string(s.stats.preemptions); });
  each("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.",
       "vllm:prompt_tokens_total",
       [](const WS& s) { return std::to_string(s.counters.prompt_tokens); });
  each("vllm:generation_tokens", "counter", "Number of generation tokens processed.",
       "vllm:generation_tokens_total",
       [](const WS& s) { return std::to_string(s.counters.generation_tokens); });
  each("vllm:request_success", "counter", "Count of successfully processed requests.",
       "vllm:request_success_total",
       [](const WS& s) { return std::to_string(s.counters.finished_requests); });
  each(
      "vllm:spec_decode_num_drafts", "counter", "Number of spec decoding drafts.",
      "vllm:spec_decode_num_drafts_total",
      [](const WS& s) { return std::to_string(s.counters.spec_drafts); }, true);
  each(
      "vllm:spec_decode_num_draft_tokens", "counter", "Number of draft tokens.",
      "vllm:spec_decode_num_draft_tokens_total",
      [](const WS& s) { return std::to_string(s.counters.spec_draft_tokens); }, true);
  each(
      "vllm:spec_decode_num_accepted_tokens", "counter", "Number of accepted tokens.",
      "vllm:spec_decode_num_accepted_tokens_total",
      [](const WS& s) { return std::to_string(s.counters.spec_accepted_tokens); }, true);
  append_family(out, "vllm:spec_decode_num_accepted_tokens_per_pos", "counter",
                "Accepted tokens per draft position.");
  for (const Row& r : rows) {
    if (!r.spec) continue;
    const auto& per_pos = r.state->counters.spec_accepted_per_position;
    for (size_t p = 0; p < per_pos.size(); ++p) {
      append_sample(out, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                    r.labels + ",position=\"" + std::to_string(p) + "\"",
                    std::to_string(per_pos[p]));
    }
  }
  each("servebench_sim:worker_busy_seconds", "counter",
       "Time the replica's steps ran (the GPU busy), in seconds.",
       "servebench_sim:worker_busy_seconds_total",
       [](const WS& s) { return fmt(static_cast<double>(s.counters.busy_ns) * 1e-9); });
  each("servebench_sim:worker_num_gpu_blocks", "gauge", "KV cache capacity in blocks.",
       "servebench_sim:worker_num_gpu_blocks",
       [](const WS& s) { return std::to_string(s.num_gpu_blocks); });
  return out;
}

std::string dcgm_exposition(DeploymentShared& shared, int64_t now_ns) {
  const deploy::Deployment& d = shared.spec;
  std::lock_guard lock(shared.mu);
  if (shared.gpus.empty()) {
    shared.gpus = gpu_table(d);
    shared.gpu_samples.assign(shared.gpus.size(), DeploymentShared::GpuSample{});
    for (auto& smp : shared.gpu_samples) smp.at_ns = shared.start_ns;
  }
  const std::vector<deploy::WorkerState> states = shared.model->worker_states();

  struct Row {
    std::string labels;
    double util = 0, sm_active = 0, fb_used = 0, fb_free = 0, power = 0, energy_mj = 0;
    double nvlink_total = 0, nvlink_tx_rate = 0, nvlink_rx_rate = 0;
    double ib_tx = 0, ib_rx = 0;
  };
  std::vector<Row> rows;
  for (size_t g = 0; g < shared.gpus.size(); ++g) {
    const GpuInfo& gpu = shared.gpus[g];
    DeploymentShared::GpuSample& smp = shared.gpu_samples[g];
    Row row;
    const std::string& model = gpu.node->gpu.name;
    char uuid[64];
    const uint64_t host_hash = std::hash<std::string>{}(gpu.node->name) & 0xffffffffffffULL;
    std::snprintf(uuid, sizeof uuid, "GPU-5e7e%04x-%04x-4000-8000-%012llx",
                  static_cast<unsigned>(g % 0x10000), static_cast<unsigned>(gpu.index),
                  static_cast<unsigned long long>(host_hash));
    row.labels = "gpu=\"" + std::to_string(gpu.index) + "\"," + quoted_label("UUID", uuid) +
                 ",device=\"nvidia" + std::to_string(gpu.index) + "\"," +
                 quoted_label("modelName", "NVIDIA " + model) + "," +
                 quoted_label("Hostname", gpu.node->name);
    double tokens_tx_nv = 0, tokens_rx_nv = 0, ib_tx = 0, ib_rx = 0, fb = 0;
    double u_sum_share = 0, idle_product = 1;
    const double dt = static_cast<double>(now_ns - smp.at_ns);
    const bool fresh = now_ns - smp.at_ns >= kMinSampleNs;
    if (smp.tenant_busy_ns.size() != gpu.tenants.size()) {
      smp.tenant_busy_ns.assign(gpu.tenants.size(), 0);
    }
    for (size_t t = 0; t < gpu.tenants.size(); ++t) {
      const Tenant& tn = gpu.tenants[t];
      const deploy::WorkerState& s = states[tn.state];
      const double b = static_cast<double>(s.counters.busy_ns);
      if (fresh && dt > 0) {
        const double u = std::clamp((b - smp.tenant_busy_ns[t]) / dt, 0.0, 1.0);
        idle_product *= 1 - u;
        u_sum_share += u * tn.compute_share;
        smp.tenant_busy_ns[t] = b;
      }
      fb += tn.weight_bytes + s.stats.kv_cache_usage * s.num_gpu_blocks * tn.kv_bytes_per_block;
      // Tokens computed: prompt, sampled, and drafts verified but rejected.
      const double tokens = static_cast<double>(s.counters.prompt_tokens) +
                            static_cast<double>(s.counters.generation_tokens) +
                            static_cast<double>(s.counters.spec_draft_tokens) -
                            static_cast<double>(s.counters.spec_accepted_tokens);
      const double ar = tokens * tn.allreduce_bytes_per_token;
      (tn.allreduce_scale_out ? ib_tx : tokens_tx_nv) += ar;
      (tn.allreduce_scale_out ? ib_rx : tokens_rx_nv) += ar;
      const double hop = tokens * tn.hop_bytes_per_token;
      if (tn.sends_hop) (tn.hop_out_scale_out ? ib_tx : tokens_tx_nv) += hop;
      if (tn.receives_hop) (tn.hop_in_scale_out ? ib_rx : tokens_rx_nv) += hop;
      (tn.kv_scale_out ? ib_tx : tokens_tx_nv) += s.kv_sent_bytes * tn.kv_share;
      (tn.kv_scale_out ? ib_rx : tokens_rx_nv) += s.kv_received_bytes * tn.kv_share;
    }
    const double tdp = tdp_watts(model), idle = 0.1 * tdp;
    if (smp.power_w == 0) smp.power_w = idle;
    if (fresh && dt > 0) {
      smp.util = 1 - idle_product;
      smp.sm_active = std::min(1.0, u_sum_share);
      const double power = idle + (tdp - idle) * (0.4 * smp.util + 0.6 * smp.sm_active);
      smp.energy_mj += smp.power_w * dt * 1e-6;  // the last interval at the last power
      smp.power_w = power;
      smp.nvlink_tx_rate = (tokens_tx_nv - smp.nvlink_tx) / dt * 1e9;
      smp.nvlink_rx_rate = (tokens_rx_nv - smp.nvlink_rx) / dt * 1e9;
      smp.nvlink_tx = tokens_tx_nv;
      smp.nvlink_rx = tokens_rx_nv;
      smp.at_ns = now_ns;
    }
    row.util = smp.util * 100;
    row.sm_active = smp.sm_active;
    row.fb_used = fb / kMiB;
    row.fb_free = std::max(0.0, gpu.node->gpu.memory_bytes - fb) / kMiB;
    row.power = smp.power_w;
    row.energy_mj = smp.energy_mj;
    row.nvlink_total = tokens_tx_nv + tokens_rx_nv;
    row.nvlink_tx_rate = smp.nvlink_tx_rate;
    row.nvlink_rx_rate = smp.nvlink_rx_rate;
    row.ib_tx = ib_tx;
    row.ib_rx = ib_rx;
    rows.push_back(std::move(row));
  }

  std::string out;
  auto each = [&](const char* name, const char* type, const char* help, double Row::*field,
                  const char* extra = "") {
    append_family(out, name, type, help);
    for (const Row& r : rows) append_sample(out, name, r.labels + extra, fmt(r.*field));
  };
  each("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", &Row::util);
  each("DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.",
       &Row::sm_active);
  each("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", &Row::fb_used);
  each("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", &Row::fb_free);
  each("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", &Row::power);
  each("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
       "Total energy consumption since start (in mJ).", &Row::energy_mj);
  each("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter",
       "Total bytes over the GPU's NVLinks, sent and received.", &Row::nvlink_total);
  each("DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", "NVLink bytes sent per second.",
       &Row::nvlink_tx_rate);
  each("DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", "NVLink bytes received per second.",
       &Row::nvlink_rx_rate);
  // The scale-out NIC beside each GPU (rail-optimised, one per GPU), as node-exporter names it.
  each("node_infiniband_port_data_transmitted_bytes_total", "counter",
       "Bytes sent over the GPU's scale-out NIC (InfiniBand, RoCE, Ethernet).", &Row::ib_tx,
       ",port=\"1\"");
  each("node_infiniband_port_data_received_bytes_total", "counter",
       "Bytes received over the GPU's scale-out NIC.", &Row::ib_rx, ",port=\"1\"");
  return out;
}

}  // namespace servebench::sim::detail
