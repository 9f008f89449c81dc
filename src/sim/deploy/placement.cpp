// Placement of workers on GPUs (placement.h): GPUs are taken in order from a worker's nodes;
// a replica is TP-major (stage s holds GPUs s·tp … s·tp + tp − 1), so PP stages cross nodes
// first, as vLLM's multi-node TP×PP layouts do. Workers sharing GPUs take the first one's.
#include "sim/deploy/placement.h"

#include <cmath>
#include <map>

namespace servebench::sim::deploy {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

const Link& slower(const Link& a, const Link& b) {
  return a.bytes_per_s <= b.bytes_per_s ? a : b;
}

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

void check_model_split(const ModelShape& m, const WorkerSpec& w, int index,
                       const PlacementFail& fail) {
  if (m.heads % w.hardware.tp != 0) {
    fail(index, "tp",
         "tp " + std::to_string(w.hardware.tp) + " does not divide the model's " +
             std::to_string(m.heads) + " attention heads");
  }
  if (m.kv_lora_rank == 0 && m.kv_heads % w.hardware.tp != 0 && w.hardware.tp % m.kv_heads != 0) {
    fail(index, "tp",
         "tp " + std::to_string(w.hardware.tp) +
             " neither divides nor is a multiple of the "
             "model's " +
             std::to_string(m.kv_heads) + " KV heads");
  }
  if (w.hardware.pp > m.layers) {
    fail(index, "pp",
         "pp " + std::to_string(w.hardware.pp) + " exceeds the model's " +
             std::to_string(m.layers) + " layers");
  }
}

}  // namespace

void place_workers(Deployment& d, const PlacementFail& fail, const SharingFail& fail_sharing) {
  std::map<std::string, size_t> node_index;
  for (size_t n = 0; n < d.nodes.size(); ++n) node_index[d.nodes[n].name] = n;
  std::vector<int32_t> used(d.nodes.size(), 0);
  // Workers after the first of a shared group reuse its GPUs.
  std::map<std::string, std::string> shares_with;
  for (size_t g = 0; g < d.shared_gpus.size(); ++g) {
    const SharedGpuSpec& s = d.shared_gpus[g];
    for (size_t i = 1; i < s.workers.size(); ++i) shares_with[s.workers[i]] = s.workers[0];
  }
  std::map<std::string, std::vector<size_t>> first_replica_nodes;  // worker → GPU → node

  for (size_t wi = 0; wi < d.workers.size(); ++wi) {
    WorkerSpec& w = d.workers[wi];
    const int index = static_cast<int>(wi);
    const int32_t per_replica = w.hardware.tp * w.hardware.pp;
    std::vector<size_t> gpu_nodes;  // replica 0's GPUs
    if (auto host = shares_with.find(w.name); host != shares_with.end()) {
      gpu_nodes = first_replica_nodes[host->second];
      for (const WorkerSpec& other : d.workers) {
        if (other.name == host->second) w.replica_gpus = other.replica_gpus;
      }
      if (static_cast<int32_t>(gpu_nodes.size()) != per_replica) {
        fail(index, "tp",
             "a worker sharing GPUs with '" + host->second + "' needs the same tp × pp (" +
                 std::to_string(gpu_nodes.size()) + " GPUs)");
      }
    } else {
      std::vector<size_t> candidates;
      for (const std::string& name : w.nodes) candidates.push_back(node_index.at(name));
      if (candidates.empty()) {
        for (size_t n = 0; n < d.nodes.size(); ++n) candidates.push_back(n);
      }
      for (int32_t r = 0; r < w.replicas; ++r) {
        std::vector<size_t> taken;
        std::vector<GpuSlot> slots;
        for (size_t n : candidates) {
          while (used[n] < d.nodes[n].gpus && static_cast<int32_t>(taken.size()) < per_replica) {
            slots.push_back(GpuSlot{static_cast<int32_t>(n), used[n]});
            ++used[n];
            taken.push_back(n);
          }
        }
        w.replica_gpus.push_back(std::move(slots));
        if (static_cast<int32_t>(taken.size()) < per_replica) {
          fail(index, "replicas",
               std::to_string(w.replicas) + " replicas of tp × pp = " +
                   std::to_string(per_replica) + " GPUs do not fit the free GPUs of " +
                   (w.nodes.empty() ? std::string("the nodes") : "its nodes"));
        }
        if (r == 0) gpu_nodes = taken;
      }
    }
    first_replica_nodes[w.name] = gpu_nodes;

    const NodeSpec& home = d.nodes[gpu_nodes.front()];
    WorkerHardware& hw = w.hardware;
    hw.gpu = home.gpu;
    hw.model = d.model;
    hw.tp_link = home.gpu.intra_node;
    hw.pp_hops.clear();
    for (int32_t s = 0; s < hw.pp; ++s) {
      const size_t first = gpu_nodes[static_cast<size_t>(s * hw.tp)];
      for (int32_t k = 1; k < hw.tp; ++k) {
        size_t n = gpu_nodes[static_cast<size_t>(s * hw.tp + k)];
        if (n != first) hw.tp_link = slower(hw.tp_link, d.nodes[n].scale_out);
      }
      if (s + 1 < hw.pp) {
        const size_t next = gpu_nodes[static_cast<size_t>((s + 1) * hw.tp)];
        hw.pp_hops.push_back(next == first
                                 ? home.gpu.intra_node
                                 : slower(d.nodes[first].scale_out, d.nodes[next].scale_out));
      }
    }
    if (w.given_costs) continue;  // a profile's costs and KV blocks are given
    check_model_split(d.model, w, index, fail);

    const double usable = hw.gpu.memory_bytes * w.gpu_memory_utilization - w.reserved_gib * kGiB;
    const double weights = model_sizes(d.model).weight_bytes / per_replica;
    if (weights >= usable) {
      fail(index, "tp",
           "the model does not fit: " + gb(weights) + " of weights per GPU, " + gb(usable) +
               " usable per " + hw.gpu.name + " (gpu_memory_utilization " +
               std::to_string(w.gpu_memory_utilization).substr(0, 4) + ", reserved " +
               std::to_string(w.reserved_gib).substr(0, 4) + " GiB)");
    }
    if (!w.kv_blocks_given) {
      const double per_block =
          kv_bytes_per_token_per_gpu(d.model, hw.tp, hw.pp) * w.engine.block_size;
      const double blocks = std::floor((usable - weights) / per_block);
      if (blocks < 1) fail(index, "tp", "no memory is left for the KV cache");
      w.engine.num_gpu_blocks = static_cast<int32_t>(std::min(blocks, 2e9));
    }
  }

  for (size_t g = 0; g < d.shared_gpus.size(); ++g) {
    SharedGpuSpec& s = d.shared_gpus[g];
    double utilization = 0;
    int32_t sms = 0;
    for (size_t i = 0; i < s.workers.size(); ++i) {
      for (WorkerSpec& w : d.workers) {
        if (w.name != s.workers[i]) continue;
        utilization += w.gpu_memory_utilization;
        if (s.mode == SharedGpuSpec::Mode::kSmPartition) {
          sms += s.sms[i];
          if (w.hardware.gpu.sms > 0)
            w.hardware.compute_share = static_cast<double>(s.sms[i]) / w.hardware.gpu.sms;
          if (sms > w.hardware.gpu.sms) {
            fail_sharing(g, "sms",
                         "the partitions take " + std::to_string(sms) + " SMs; a " +
                             w.hardware.gpu.name + " has " + std::to_string(w.hardware.gpu.sms));
          }
        }
      }
    }
    if (utilization > 1.0 + 1e-9) {
      fail_sharing(g, "workers",
                   "the workers' gpu_memory_utilization add up to more than 1 on shared GPUs");
    }
  }
}

}  // namespace servebench::sim::deploy
