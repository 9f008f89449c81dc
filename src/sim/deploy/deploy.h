// File: sim/deploy/deploy.h
// A simulated deployment (docs/deployments.md): a YAML file naming a model, GPUs, nodes and
// links, workers (continuous-batching engines with TP, PP and a place on the nodes),
// routers (replicas, or disaggregated prefill/decode pools) and frontends. It becomes one
// DeploymentModel: a TimingModel per frontend, composed from sim/model engines whose steps
// the roofline cost of hardware.h prices (or a profile's linear costs). Pure logic on ns
// timestamps; the HTTP front is not here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/deploy/hardware.h"
#include "sim/model/engine.h"

namespace servebench::sim::deploy {

struct NodeSpec {
  std::string name;
  int32_t gpus = 8;
  Gpu gpu;
  Link scale_out;  // between nodes (infiniband, ethernet, …)
};

// One GPU of the nodes: the node's index in Deployment::nodes and the GPU's index in it.
struct GpuSlot {
  int32_t node = 0;
  int32_t gpu = 0;
};

// Seed 000's TP8 at 4 req/s: ITL p99 29.63 ms over a median of 27.19 ms; as a normal spread
// (p99 = median + 2.326 σ) that is σ/median ≈ 0.039.
inline constexpr double kDefaultStepTimeCv = 0.04;

struct WorkerSpec {
  std::string name;
  int32_t replicas = 1;
  EngineProfile engine;  // scheduler limits; with given costs (a profile) its linear costs
  bool given_costs = false;
  bool kv_blocks_given = false;  // else derived from memory
  WorkerHardware hardware;       // the roofline's facts (hops filled from the placement)
  SpecDecode spec;
  std::vector<std::string> nodes;  // placement: GPUs taken in order from these nodes
  double gpu_memory_utilization = 0.9;
  double reserved_gib = 3;  // activations, CUDA graphs, NCCL buffers per GPU
  bool prefix_caching = true;
  double step_time_scale = 1;  // a slower (>1) or faster replica group
  // Step-time noise: each step's duration × a lognormal draw of mean 1 and this coefficient of
  // variation, fixed by (noise_seed, worker, replica, the step's start), so replicas drift apart
  // as real ones do and a run is repeatable. 0.04 from seed 000 (docs/deployments.md).
  double step_time_cv = kDefaultStepTimeCv;
  // Initial phase: a replica's first step starts up to this much after its first request
  // arrives (a seeded uniform fraction per replica), as if the replicas had been busy before.
  int64_t start_phase_ns = 0;
  uint64_t noise_seed = 0;
  // Filled by placement: each replica's GPUs, stage by stage (tp GPUs per PP stage).
  std::vector<std::vector<GpuSlot>> replica_gpus;
};

enum class RoutePolicy { kRoundRobin, kLeastOutstanding, kKvAware };

struct RouterSpec {
  std::string name;
  RoutePolicy policy = RoutePolicy::kRoundRobin;
  std::vector<std::string> workers;      // aggregated: any replica serves a whole request
  std::vector<std::string> prefill;      // disaggregated: these prefill …
  std::vector<std::string> decode;       // … and these decode
  Link kv_link;                          // disaggregated: the KV cache moves over it
  int64_t kv_overhead_ns = 0;            // fixed cost of a transfer beyond the link's latency
  int32_t local_prefill_max_tokens = 0;  // conditional disaggregation: prefill locally
  double kv_overlap_weight = 1;  // kv_aware: weight of the blocks to prefill vs active blocks
  bool disaggregated() const { return !prefill.empty(); }
};

// What vLLM's frontend spends on each streamed chunk (one per request per step): BLIS's
// coefficient per output token fitted on vLLM 0.15.1, H100 (46 µs; docs/deployments.md,
// "Frontend output").
inline constexpr int64_t kDefaultOutputNsPerChunk = 46'000;

struct FrontendSpec {
  std::string name;
  std::string router;
  int64_t request_overhead_ns = 0;  // tokenization, routing: before a worker sees it
  uint16_t port = 0;                // where `servebench sim --deployment` serves it; 0: not given
  // The output stage (frontend_output.h): each streamed chunk takes this long to write, one
  // after another on each of `api_servers` loops.
  int64_t output_ns_per_chunk = kDefaultOutputNsPerChunk;
  int32_t api_servers = 1;
};

struct SharedGpuSpec {
  enum class Mode { kMps, kSmPartition };
  Mode mode = Mode::kMps;
  std::vector<std::string> workers;  // placed on the same GPUs
  std::vector<int32_t> sms;          // kSmPartition: SMs of each worker
  double slowdown = 2.35;            // a step's factor while a co-tenant is busy
};

struct Deployment {
  std::string path;  // for errors
  std::string name;
  ModelShape model;
  std::vector<NodeSpec> nodes;
  std::vector<WorkerSpec> workers;
  std::vector<RouterSpec> routers;
  std::vector<FrontendSpec> frontends;
  std::vector<SharedGpuSpec> shared_gpus;
};

// Reads and checks a deployment file. Anything that cannot run (unknown GPU, TP not dividing
// the heads, weights not fitting, too few GPUs, …) is one core::Error(kInput) naming
// file:line and the key.
Deployment load_deployment(const std::string& path);
// The file's text; throws core::Error(kInput) naming the file when it cannot be read.
std::string read_deployment_file(const std::string& path);
// The same from text; `path` names it in errors and anchors relative paths.
Deployment parse_deployment(const std::string& yaml_text, const std::string& path);

// One engine replica's state, for /metrics (a label per worker and replica).
struct WorkerState {
  std::string worker;
  int32_t replica = 0;
  ModelStats stats;  // running, waiting, KV usage, preemptions, steps
  EngineCounters counters;
  int32_t num_gpu_blocks = 0;
  double kv_sent_bytes = 0;      // disaggregated: KV caches this replica sent to decode …
  double kv_received_bytes = 0;  // … and received from prefill replicas
};

// Where a request went, for the trace.
struct RequestRoute {
  std::string worker;  // aggregated: the worker that served it; else the decode one
  int32_t replica = -1;
  std::string prefill_worker;  // disaggregated, prefilled remotely
  int32_t prefill_replica = -1;
  int32_t cached_prompt_tokens = 0;  // prefix-cache hit on the worker
  double kv_transfer_bytes = 0;
  int64_t kv_transfer_start_ns = 0;
  int64_t kv_transfer_end_ns = 0;
};

class FrontendModel : public TimingModel {
 public:
  // add() with a prompt prefix the router can match: `prefix_key` names the first
  // `prefix_tokens` tokens (the same key means the same tokens); 0 means none.
  virtual void add_with_prefix(uint64_t request_id, RequestShape shape, int64_t arrival_ns,
                               uint64_t prefix_key, int32_t prefix_tokens) = 0;
  // Where the request went; kept until the next call after its last token was popped.
  virtual std::optional<RequestRoute> route(uint64_t request_id) const = 0;
};

// All frontends share the deployment's state: the server serializes every call to every
// frontend of one DeploymentModel (one mutex). pop_due on any frontend advances the whole
// deployment to now; tokens of other frontends wait in their own queues.
class DeploymentModel {
 public:
  virtual ~DeploymentModel() = default;
  virtual size_t frontend_count() const = 0;
  virtual const FrontendSpec& frontend_spec(size_t index) const = 0;
  virtual FrontendModel& frontend(size_t index) = 0;
  virtual std::vector<WorkerState> worker_states() const = 0;
};

std::unique_ptr<DeploymentModel> make_deployment_model(const Deployment& deployment);

}  // namespace servebench::sim::deploy
