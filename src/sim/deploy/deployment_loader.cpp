// Reads a deployment file (docs/deployments.md, "The file") into a checked Deployment. Names
// are resolved here (model, GPUs, links, nodes, workers, routers); placement.cpp puts the
// workers on GPUs and checks that they fit.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "sim/deploy/deploy.h"
#include "sim/deploy/placement.h"
#include "sim/deploy/yaml_reader.h"

namespace servebench::sim::deploy {
namespace {

constexpr double kGB = 1e9;

std::string indexed(const char* list, size_t i) {
  return std::string(list) + "[" + std::to_string(i) + "]";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class Loader {
 public:
  Loader(const std::string& path, const YAML::Node& root) : in_(path), root_(root) {
    base_dir_ = std::filesystem::path(path).parent_path();
  }

  Deployment load() {
    d_.path = in_.path();
    if (!root_.IsMap()) in_.fail(root_, "", "expected a mapping (see docs/deployments.md)");
    in_.expect_map(root_, "",
                   {"name", "model", "gpu", "gpus", "gpus_per_node", "network", "links", "nodes",
                    "workers", "routers", "frontends", "shared_gpus"});
    d_.name = std::filesystem::path(in_.path()).stem().string();
    in_.get(root_, "", "name", d_.name);
    read_links();
    read_gpus();
    read_nodes();
    read_workers();
    if (needs_model_ || root_["model"]) read_model();
    read_shared_gpus();
    place_workers(
        d_,
        [&](int w, const std::string& key, const std::string& message) {
          const YAML::Node node = root_["workers"][static_cast<size_t>(w)];
          const YAML::Node at = node[key] ? node[key] : node;
          in_.fail(at, key_path(indexed("workers", static_cast<size_t>(w)), key), message);
        },
        [&](size_t g, const std::string& key, const std::string& message) {
          in_.fail(root_["shared_gpus"][g], key_path(indexed("shared_gpus", g), key), message);
        });
    read_routers();
    read_frontends();
    return d_;
  }

 private:
  Link link_named(const YAML::Node& node, const std::string& key, const Gpu* gpu) {
    std::string name = in_.text(node, key);
    if (auto it = links_.find(name); it != links_.end()) return it->second;
    if (name == "nvlink" && gpu) return gpu->intra_node;
    if (auto l = builtin_link(name)) return *l;
    in_.fail(node, key,
             "unknown link '" + name +
                 "' (built in: nvlink, infiniband, infiniband-ndr, roce, ethernet, "
                 "pcie4, pcie5; or one under links:)");
  }

  void read_links() {
    // Custom or overridden links: links: {NAME: {GBps, latency_us}}.
    const YAML::Node links = root_["links"];
    if (!links) return;
    if (!links.IsMap()) in_.fail(links, "links", "expected a mapping of link names to specs");
    for (const auto& item : links) {
      const std::string name = in_.text(item.first, "links");
      const std::string at = "links." + name;
      in_.expect_map(item.second, at, {"GBps", "latency_us"});
      if (!item.second["GBps"]) in_.fail(item.second, at + ".GBps", "missing");
      double gbps = 0, latency_us = 0;
      in_.get(item.second, at, "GBps", gbps, 1e-3, 1e6);
      in_.get(item.second, at, "latency_us", latency_us, 0, 1e7);
      links_[name] = Link{name, gbps * kGB, std::llround(latency_us * 1e3)};
    }
  }

  void read_gpus() {
    // Custom GPUs: gpus: {NAME: {hbm_GBps, bf16_TFLOPS, fp8_TFLOPS, memory_GiB, sms, …}}.
    const YAML::Node gpus = root_["gpus"];
    if (!gpus) return;
    if (!gpus.IsMap()) in_.fail(gpus, "gpus", "expected a mapping of GPU names to their specs");
    for (const auto& item : gpus) {
      const std::string name = in_.text(item.first, "gpus");
      const std::string at = "gpus." + name;
      const YAML::Node g = item.second;
      in_.expect_map(g, at,
                     {"hbm_GBps", "bf16_TFLOPS", "fp8_TFLOPS", "memory_GiB", "sms", "intra_node"});
      Gpu gpu;
      gpu.name = name;
      for (const char* required : {"hbm_GBps", "bf16_TFLOPS", "memory_GiB"}) {
        if (!g[required]) in_.fail(g, key_path(at, required), "missing");
      }
      double hbm = 0, bf16 = 0, fp8 = 0, mem = 0;
      in_.get(g, at, "hbm_GBps", hbm, 1, 1e6);
      in_.get(g, at, "bf16_TFLOPS", bf16, 1, 1e6);
      in_.get(g, at, "fp8_TFLOPS", fp8, 0, 1e6);
      in_.get(g, at, "memory_GiB", mem, 1, 1e5);
      gpu.hbm_bytes_per_s = hbm * kGB;
      gpu.bf16_flops = bf16 * 1e12;
      gpu.fp8_flops = fp8 * 1e12;
      gpu.memory_bytes = mem * 1024 * 1024 * 1024;
      in_.get(g, at, "sms", gpu.sms, 1, 100000);
      gpu.intra_node = *builtin_link("pcie5");
      gpu.intra_node.name = "nvlink";
      gpu.intra_node.bytes_per_s = 450 * kGB;
      if (g["intra_node"])
        gpu.intra_node = link_named(g["intra_node"], at + ".intra_node", nullptr);
      gpus_[name] = gpu;
    }
  }

  Gpu gpu_named(const YAML::Node& node, const std::string& key) {
    std::string name = in_.text(node, key);
    if (auto it = gpus_.find(name); it != gpus_.end()) return it->second;
    if (auto g = builtin_gpu(name)) return *g;
    in_.fail(node, key,
             "unknown GPU '" + name + "' (built in: " + joined(builtin_gpu_names()) +
                 "; or give one under gpus:)");
  }

  void read_nodes() {
    int32_t per_node = 8;
    in_.get(root_, "", "gpus_per_node", per_node, 1, 1024);
    const YAML::Node nodes = root_["nodes"];
    if (!nodes) {
      // One node of the file's GPU.
      if (!root_["gpu"]) in_.fail(root_, "gpu", "missing (or give nodes:)");
      NodeSpec n;
      n.name = "node0";
      n.gpus = per_node;
      n.gpu = gpu_named(root_["gpu"], "gpu");
      n.scale_out = root_["network"] ? link_named(root_["network"], "network", &n.gpu)
                                     : *builtin_link("ethernet");
      d_.nodes.push_back(n);
      return;
    }
    if (!nodes.IsSequence() || nodes.size() == 0) in_.fail(nodes, "nodes", "expected a list");
    for (size_t i = 0; i < nodes.size(); ++i) {
      const std::string at = indexed("nodes", i);
      const YAML::Node node = nodes[i];
      in_.expect_map(node, at, {"name", "gpu", "gpus", "network", "count"});
      int32_t count = 1;
      in_.get(node, at, "count", count, 1, 4096);
      NodeSpec n;
      n.gpus = per_node;
      in_.get(node, at, "gpus", n.gpus, 1, 1024);
      const YAML::Node gpu = node["gpu"] ? node["gpu"] : root_["gpu"];
      if (!gpu) in_.fail(node, key_path(at, "gpu"), "missing (here or at the top)");
      n.gpu = gpu_named(gpu, key_path(at, "gpu"));
      const YAML::Node net = node["network"] ? node["network"] : root_["network"];
      n.scale_out =
          net ? link_named(net, key_path(at, "network"), &n.gpu) : *builtin_link("ethernet");
      std::string name = "node" + std::to_string(i);
      in_.get(node, at, "name", name);
      for (int32_t c = 0; c < count; ++c) {
        n.name = count == 1 ? name : name + std::to_string(c);
        if (!node_names_.insert(n.name).second) {
          in_.fail(node, key_path(at, "name"), "node '" + n.name + "' is named twice");
        }
        d_.nodes.push_back(n);
      }
      if (count > 1) groups_[name] = static_cast<size_t>(count);
    }
  }

  void read_model() {
    const YAML::Node model = root_["model"];
    if (!model) in_.fail(root_, "model", "missing (a built-in name, config:, or hf:)");
    if (model.IsScalar()) {
      std::string name = in_.text(model, "model");
      if (auto m = builtin_model(name)) {
        d_.model = *m;
        return;
      }
      in_.fail(model, "model",
               "unknown model '" + name + "' (built in: " + joined(builtin_model_names()) +
                   "; or config: / hf:)");
    }
    in_.expect_map(model, "model", {"builtin", "config", "hf", "dtype"});
    if (model["builtin"]) {
      std::string name = in_.text(model["builtin"], "model.builtin");
      auto m = builtin_model(name);
      if (!m) in_.fail(model["builtin"], "model.builtin", "unknown model '" + name + "'");
      d_.model = *m;
    } else if (model["config"]) {
      std::filesystem::path p = in_.text(model["config"], "model.config");
      if (p.is_relative()) p = base_dir_ / p;
      d_.model = model_from_hf_config(p.string());
    } else if (model["hf"]) {
      std::string repo = in_.text(model["hf"], "model.hf");
      std::string config = find_hf_cached_config(repo);
      if (config.empty()) {
        in_.fail(model["hf"], "model.hf",
                 "'" + repo + "' has no config.json in the local Hugging Face cache");
      }
      d_.model = model_from_hf_config(config);
      d_.model.name = repo;
    } else {
      in_.fail(model, "model", "give one of builtin:, config:, hf:");
    }
    if (const YAML::Node dtype = model["dtype"]) {
      std::string t = in_.text(dtype, "model.dtype");
      if (t != "bf16" && t != "fp16" && t != "fp8") {
        in_.fail(dtype, "model.dtype", "expected bf16, fp16 or fp8");
      }
      d_.model.bytes_per_param = t == "fp8" ? 1 : 2;
    }
  }

  void read_workers();
  void read_routers();
  void read_frontends();
  void read_shared_gpus();

  size_t worker_named(const YAML::Node& node, const std::string& key, const std::string& name) {
    for (size_t w = 0; w < d_.workers.size(); ++w) {
      if (d_.workers[w].name == name) return w;
    }
    in_.fail(node, key, "no worker is named '" + name + "'");
  }

  YamlReader in_;
  YAML::Node root_;
  std::filesystem::path base_dir_;
  Deployment d_;
  std::map<std::string, Link> links_;
  std::map<std::string, Gpu> gpus_;
  std::set<std::string> node_names_;
  std::map<std::string, size_t> groups_;  // a node name with count: N → N nodes
  bool needs_model_ = false;
};

void Loader::read_workers() {
  const YAML::Node workers = root_["workers"];
  if (!workers || !workers.IsSequence() || workers.size() == 0) {
    in_.fail(workers ? workers : root_, "workers", "expected a list of workers");
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    const std::string at = indexed("workers", i);
    const YAML::Node node = workers[i];
    in_.expect_map(node, at,
                   {"name", "replicas", "tp", "pp", "nodes", "engine", "efficiency", "overheads",
                    "speculative", "profile", "step_time_scale", "step_time_cv", "start_phase_ms",
                    "noise_seed"});
    WorkerSpec w;
    w.name = "worker" + std::to_string(i);
    in_.get(node, at, "name", w.name);
    for (const WorkerSpec& other : d_.workers) {
      if (other.name == w.name) in_.fail(node["name"], at + ".name", "named twice");
    }
    in_.get(node, at, "replicas", w.replicas, 1, 4096);
    in_.get(node, at, "tp", w.hardware.tp, 1, 1024);
    in_.get(node, at, "pp", w.hardware.pp, 1, 1024);
    in_.get(node, at, "step_time_scale", w.step_time_scale, 1e-3, 1e3);
    in_.get(node, at, "step_time_cv", w.step_time_cv, 0, 2);
    double phase_ms = 0;
    in_.get(node, at, "start_phase_ms", phase_ms, 0, 1e6);
    w.start_phase_ns = std::llround(phase_ms * 1e6);
    double noise_seed = 0;
    in_.get(node, at, "noise_seed", noise_seed, 0, 1e15);
    w.noise_seed = static_cast<uint64_t>(noise_seed);
    if (const YAML::Node nodes = node["nodes"]) {
      for (const std::string& name : in_.names(nodes, at + ".nodes")) {
        if (auto g = groups_.find(name); g != groups_.end()) {
          for (size_t c = 0; c < g->second; ++c) w.nodes.push_back(name + std::to_string(c));
        } else if (node_names_.contains(name)) {
          w.nodes.push_back(name);
        } else {
          in_.fail(nodes, at + ".nodes", "no node is named '" + name + "'");
        }
      }
    }
    w.engine.name = w.name;
    if (const YAML::Node profile = node["profile"]) {
      std::filesystem::path p = in_.text(profile, at + ".profile");
      if (p.is_relative()) p = base_dir_ / p;
      w.engine = load_engine_profile(p.string());
      w.engine.name = w.name;
      w.given_costs = true;
      w.kv_blocks_given = true;
    } else {
      needs_model_ = true;
    }
    if (const YAML::Node e = node["engine"]) {
      const std::string ea = at + ".engine";
      in_.expect_map(
          e, ea,
          {"max_num_seqs", "max_num_batched_tokens", "chunked_prefill", "block_size",
           "num_gpu_blocks", "gpu_memory_utilization", "reserved_GiB", "prefix_caching"});
      in_.get(e, ea, "max_num_seqs", w.engine.max_num_seqs);
      in_.get(e, ea, "max_num_batched_tokens", w.engine.max_num_batched_tokens);
      in_.get(e, ea, "chunked_prefill", w.engine.chunked_prefill);
      in_.get(e, ea, "block_size", w.engine.block_size, 1, 4096);
      if (e["num_gpu_blocks"]) w.kv_blocks_given = true;
      in_.get(e, ea, "num_gpu_blocks", w.engine.num_gpu_blocks);
      in_.get(e, ea, "gpu_memory_utilization", w.gpu_memory_utilization, 0.01, 1);
      in_.get(e, ea, "reserved_GiB", w.reserved_gib, 0, 1e4);
      in_.get(e, ea, "prefix_caching", w.prefix_caching);
    }
    if (const YAML::Node e = node["efficiency"]) {
      const std::string ea = at + ".efficiency";
      in_.expect_map(e, ea, {"bandwidth", "decode_compute", "prefill_compute", "network"});
      Efficiency& eff = w.hardware.efficiency;
      in_.get(e, ea, "bandwidth", eff.bandwidth, 0.01, 1);
      in_.get(e, ea, "decode_compute", eff.decode_compute, 0.01, 1);
      in_.get(e, ea, "prefill_compute", eff.prefill_compute, 0.01, 1);
      in_.get(e, ea, "network", eff.network, 0.01, 1);
    }
    if (const YAML::Node o = node["overheads"]) {
      const std::string oa = at + ".overheads";
      in_.expect_map(o, oa, {"step_us", "per_seq_us", "allreduce_us", "draft_us_per_token"});
      StepOverheads& ov = w.hardware.overheads;
      in_.get(o, oa, "step_us", ov.step_us, 0, 1e8);
      in_.get(o, oa, "per_seq_us", ov.per_seq_us, 0, 1e8);
      in_.get(o, oa, "allreduce_us", ov.allreduce_us, 0, 1e8);
      in_.get(o, oa, "draft_us_per_token", ov.draft_us_per_token, 0, 1e8);
    }
    if (const YAML::Node s = node["speculative"]) {
      const std::string sa = at + ".speculative";
      in_.expect_map(s, sa, {"draft_tokens", "acceptance_rate", "seed"});
      in_.get(s, sa, "draft_tokens", w.spec.draft_tokens, 1, 64);
      in_.get(s, sa, "acceptance_rate", w.spec.acceptance_rate, 0, 1);
      double seed = 0;
      in_.get(s, sa, "seed", seed, 0, 1e15);
      w.spec.seed = static_cast<uint64_t>(seed);
    }
    d_.workers.push_back(std::move(w));
  }
}

void Loader::read_shared_gpus() {
  const YAML::Node shared = root_["shared_gpus"];
  if (!shared) return;
  if (!shared.IsSequence()) in_.fail(shared, "shared_gpus", "expected a list");
  std::set<std::string> sharing;
  for (size_t i = 0; i < shared.size(); ++i) {
    const std::string at = indexed("shared_gpus", i);
    const YAML::Node node = shared[i];
    in_.expect_map(node, at, {"mode", "workers", "sms", "slowdown"});
    SharedGpuSpec s;
    std::string mode = "mps";
    in_.get(node, at, "mode", mode);
    if (mode == "sm_partition") {
      s.mode = SharedGpuSpec::Mode::kSmPartition;
      s.slowdown = 2.0;  // HBM bandwidth stays shared
    } else if (mode != "mps") {
      in_.fail(node["mode"], at + ".mode", "expected mps or sm_partition");
    }
    in_.get(node, at, "slowdown", s.slowdown, 1, 100);
    if (!node["workers"]) in_.fail(node, at + ".workers", "missing");
    s.workers = in_.names(node["workers"], at + ".workers");
    if (s.workers.size() < 2) in_.fail(node["workers"], at + ".workers", "name 2 or more");
    for (const std::string& name : s.workers) {
      const WorkerSpec& w = d_.workers[worker_named(node["workers"], at + ".workers", name)];
      if (!sharing.insert(name).second) {
        in_.fail(node["workers"], at + ".workers", "'" + name + "' is in two groups");
      }
      if (w.replicas != d_.workers[worker_named(node, at, s.workers[0])].replicas) {
        in_.fail(node["workers"], at + ".workers", "the workers need as many replicas each");
      }
    }
    if (s.mode == SharedGpuSpec::Mode::kSmPartition) {
      const YAML::Node sms = node["sms"];
      if (!sms || !sms.IsSequence() || sms.size() != s.workers.size()) {
        in_.fail(sms ? sms : node, at + ".sms", "expected one SM count per worker");
      }
      for (size_t k = 0; k < sms.size(); ++k) {
        s.sms.push_back(static_cast<int32_t>(
            in_.integer(sms[k], at + ".sms[" + std::to_string(k) + "]", 1, 100000)));
      }
    } else if (node["sms"]) {
      in_.fail(node["sms"], at + ".sms", "only for mode sm_partition");
    }
    d_.shared_gpus.push_back(std::move(s));
  }
}

void Loader::read_routers() {
  const YAML::Node routers = root_["routers"];
  if (!routers) {
    RouterSpec r;
    r.name = "default";
    for (const WorkerSpec& w : d_.workers) r.workers.push_back(w.name);
    d_.routers.push_back(r);
    return;
  }
  if (!routers.IsSequence() || routers.size() == 0) in_.fail(routers, "routers", "expected a list");
  for (size_t i = 0; i < routers.size(); ++i) {
    const std::string at = indexed("routers", i);
    const YAML::Node node = routers[i];
    in_.expect_map(node, at,
                   {"name", "policy", "workers", "prefill", "decode", "kv_link", "kv_overhead_us",
                    "local_prefill_max_tokens", "kv_overlap_weight"});
    RouterSpec r;
    r.name = "router" + std::to_string(i);
    in_.get(node, at, "name", r.name);
    std::string policy = "round_robin";
    in_.get(node, at, "policy", policy);
    if (policy == "least_outstanding") {
      r.policy = RoutePolicy::kLeastOutstanding;
    } else if (policy == "kv_aware") {
      r.policy = RoutePolicy::kKvAware;
    } else if (policy != "round_robin") {
      in_.fail(node["policy"], at + ".policy",
               "expected round_robin, least_outstanding or kv_aware");
    }
    auto workers_of = [&](const char* field) {
      std::vector<std::string> names;
      if (node[field]) {
        names = in_.names(node[field], key_path(at, field));
        for (const std::string& n : names) worker_named(node[field], key_path(at, field), n);
      }
      return names;
    };
    r.workers = workers_of("workers");
    r.prefill = workers_of("prefill");
    r.decode = workers_of("decode");
    if (r.workers.empty() == r.prefill.empty() || r.prefill.empty() != r.decode.empty()) {
      in_.fail(node, at + ".workers", "give either workers: or both prefill: and decode:");
    }
    if (r.disaggregated()) {
      if (d_.model.layers == 0) {
        in_.fail(node, at + ".prefill", "KV transfers need the model's shape (model:)");
      }
      const WorkerSpec& p = d_.workers[worker_named(node, at, r.prefill.front())];
      const WorkerSpec& dw = d_.workers[worker_named(node, at, r.decode.front())];
      const bool same_node = !p.nodes.empty() && p.nodes == dw.nodes && d_.nodes.size() == 1;
      r.kv_link = same_node || d_.nodes.size() == 1 ? p.hardware.gpu.intra_node
                                                    : d_.nodes.front().scale_out;
      if (node["kv_link"])
        r.kv_link = link_named(node["kv_link"], at + ".kv_link", &p.hardware.gpu);
      double overhead_us = 0;
      in_.get(node, at, "kv_overhead_us", overhead_us, 0, 1e8);
      r.kv_overhead_ns = std::llround(overhead_us * 1e3);
      in_.get(node, at, "local_prefill_max_tokens", r.local_prefill_max_tokens, 0, 1 << 30);
    }
    in_.get(node, at, "kv_overlap_weight", r.kv_overlap_weight, 0, 1e6);
    for (const RouterSpec& other : d_.routers) {
      if (other.name == r.name) in_.fail(node, at + ".name", "named twice");
    }
    d_.routers.push_back(std::move(r));
  }
}

void Loader::read_frontends() {
  const YAML::Node frontends = root_["frontends"];
  if (!frontends) {
    for (const RouterSpec& r : d_.routers)
      d_.frontends.push_back(FrontendSpec{r.name, r.name, 0, 0});
    return;
  }
  if (!frontends.IsSequence() || frontends.size() == 0) {
    in_.fail(frontends, "frontends", "expected a list");
  }
  for (size_t i = 0; i < frontends.size(); ++i) {
    const std::string at = indexed("frontends", i);
    const YAML::Node node = frontends[i];
    in_.expect_map(
        node, at,
        {"name", "router", "request_overhead_us", "output_us_per_chunk", "api_servers", "port"});
    FrontendSpec f;
    f.name = "frontend" + std::to_string(i);
    in_.get(node, at, "name", f.name);
    if (!node["router"] && d_.routers.size() != 1) in_.fail(node, at + ".router", "missing");
    f.router = d_.routers.front().name;
    in_.get(node, at, "router", f.router);
    bool known = false;
    for (const RouterSpec& r : d_.routers) known = known || r.name == f.router;
    if (!known) in_.fail(node["router"], at + ".router", "no router is named '" + f.router + "'");
    double overhead_us = 0;
    in_.get(node, at, "request_overhead_us", overhead_us, 0, 1e8);
    f.request_overhead_ns = std::llround(overhead_us * 1e3);
    double chunk_us = static_cast<double>(f.output_ns_per_chunk) / 1e3;
    in_.get(node, at, "output_us_per_chunk", chunk_us, 0, 1e6);
    f.output_ns_per_chunk = std::llround(chunk_us * 1e3);
    in_.get(node, at, "api_servers", f.api_servers, 1, 1024);
    int32_t port = 0;
    in_.get(node, at, "port", port, 1, 65535);
    f.port = static_cast<uint16_t>(port);
    d_.frontends.push_back(std::move(f));
  }
}

}  // namespace

Deployment parse_deployment(const std::string& yaml_text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    std::string where = e.mark.line >= 0 ? path + ":" + std::to_string(e.mark.line + 1) : path;
    throw core::Error(core::ErrorKind::kInput, where, "not valid YAML: " + e.msg);
  }
  return Loader(path, root).load();
}

std::string read_deployment_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw core::Error(core::ErrorKind::kInput, path,
                      std::string("cannot open deployment file: ") + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Deployment load_deployment(const std::string& path) {
  return parse_deployment(read_deployment_file(path), path);
}

}  // namespace servebench::sim::deploy
