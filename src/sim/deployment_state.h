// File: sim/deployment_state.h (private to the sim part)
// What every frontend of one served deployment shares (sim::DeploymentServer): the
// DeploymentModel behind one mutex, the trace file, and the server-side truth of the workers
// and GPUs: per-worker vLLM /metrics and a simulated DCGM exporter (deployment_metrics.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sim/deploy/deploy.h"

namespace servebench::sim::detail {

class TraceWriter;

struct DeploymentShared {
  deploy::Deployment spec;
  std::string text;  // the file's content
  std::unique_ptr<deploy::DeploymentModel> model;
  std::mutex mu;                       // every call into `model`, and the DCGM samples
  std::shared_ptr<TraceWriter> trace;  // one file for every frontend; null = off
  int64_t start_ns = 0;

  // The simulated DCGM exporter (under mu): each GPU's tenants, built at the first scrape, and
  // its last sample (utilization is Δbusy / Δt between samples).
  struct Tenant {      // a replica's share of one GPU, and how its traffic leaves that GPU
    size_t state = 0;  // index in worker_states()
    double weight_bytes = 0;
    double kv_bytes_per_block = 0;  // on this GPU
    double compute_share = 1;
    double allreduce_bytes_per_token = 0;
    bool allreduce_scale_out = false;  // the stage's TP group spans nodes
    double hop_bytes_per_token = 0;
    bool sends_hop = false, receives_hop = false;
    bool hop_out_scale_out = false, hop_in_scale_out = false;
    double kv_share = 0;  // 1 / GPUs of the replica: its part of the replica's KV transfers
    bool kv_scale_out = false;
  };
  struct Gpu {
    const deploy::NodeSpec* node = nullptr;
    int32_t index = 0;  // in its node
    std::vector<Tenant> tenants;
  };
  struct GpuSample {
    int64_t at_ns = 0;
    std::vector<double> tenant_busy_ns;
    double util = 0, sm_active = 0, power_w = 0, energy_mj = 0;
    double nvlink_tx = 0, nvlink_rx = 0, nvlink_tx_rate = 0, nvlink_rx_rate = 0;
  };
  std::vector<Gpu> gpus;
  std::vector<GpuSample> gpu_samples;
};

// The vLLM series of the workers frontend `frontend` reaches, one set per replica labelled
// worker and replica (engine = the replica's index in the deployment).
std::string worker_exposition(DeploymentShared& shared, size_t frontend,
                              std::string_view served_model_name);
// The simulated dcgm-exporter: one series per GPU of the deployment (gpu, UUID, Hostname…).
std::string dcgm_exposition(DeploymentShared& shared, int64_t now_ns);

}  // namespace servebench::sim::detail
