// Deployment files: the shipped examples load; what cannot run is refused with one line
// naming the file, the line and the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "sim/deploy/deploy.h"

namespace servebench::sim::deploy {
namespace {

namespace fs = std::filesystem;

const fs::path kProfiles = fs::path(SERVEBENCH_SOURCE_DIR) / "profiles";

// The error text of parsing `yaml`, or "" if it loads.
std::string refusal(const std::string& yaml) {
  try {
    parse_deployment(yaml, "dep.yaml");
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return {};
}

TEST(DeploymentFile, EveryShippedExampleLoadsAndRuns) {
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kProfiles / "deployments")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    Deployment d = load_deployment(entry.path().string());
    auto model = make_deployment_model(d);
    ASSERT_GE(model->frontend_count(), 1u);
    FrontendModel& fe = model->frontend(0);
    fe.add(1, {500, 20}, 0);
    std::vector<TokenEvent> out;
    while (auto due = fe.next_due_ns()) fe.pop_due(*due, out);
    EXPECT_EQ(out.size(), 20u);
  }
  EXPECT_GE(files, 8u);
}

TEST(DeploymentFile, FrontendPortsAndEachReplicasGpusAreKept) {
  Deployment d = parse_deployment(R"(name: p
model: Llama-3.1-8B
nodes:
  - {name: n, count: 2, gpu: H100, gpus: 2}
workers:
  - {name: w, replicas: 2, tp: 2}
frontends:
  - {name: api, router: default, port: 9123}
)",
                                  "dep.yaml");
  EXPECT_EQ(d.frontends[0].port, 9123);
  ASSERT_EQ(d.workers[0].replica_gpus.size(), 2u);
  EXPECT_EQ(d.workers[0].replica_gpus[1][0].node, 1);
  EXPECT_EQ(d.workers[0].replica_gpus[1][1].gpu, 1);
  EXPECT_NE(refusal("name: p\nmodel: Llama-3.1-8B\ngpu: H100\nworkers:\n  - {name: w}\n"
                    "frontends:\n  - {name: api, router: default, port: 70000}\n")
                .find("port"),
            std::string::npos);
}

TEST(DeploymentFile, KvBlocksComeFromTheMemoryTheWeightsLeave) {
  Deployment d =
      load_deployment((kProfiles / "deployments" / "seed000-llama-70b-a100-tp8.yaml").string());
  ASSERT_EQ(d.workers.size(), 1u);
  // 40 GiB × 0.9 − 3 GiB reserved − 17.64 GB of weights, over 40 KiB per token per GPU.
  const double usable =
      40.0 * 1024 * 1024 * 1024 * 0.9 - 3.0 * 1024 * 1024 * 1024 - 70.55e9 * 2 / 8;
  EXPECT_NEAR(d.workers[0].engine.num_gpu_blocks, usable / 40960 / 16, 40);
  EXPECT_EQ(d.workers[0].hardware.tp_link.name, "nvlink");
}

TEST(DeploymentFile, PipelineStagesAcrossNodesHopOverTheNodesNetwork) {
  Deployment ib = load_deployment(
      (kProfiles / "deployments" / "seed000-llama-70b-a100-tp4-pp2-ib.yaml").string());
  Deployment eth = load_deployment(
      (kProfiles / "deployments" / "seed000-llama-70b-a100-tp4-pp2-no-ib.yaml").string());
  ASSERT_EQ(ib.workers[0].hardware.pp_hops.size(), 1u);
  EXPECT_EQ(ib.workers[0].hardware.pp_hops[0].name, "infiniband");
  EXPECT_EQ(eth.workers[0].hardware.pp_hops[0].name, "ethernet");
  EXPECT_EQ(ib.workers[0].hardware.tp_link.name, "nvlink");  // TP stays inside a node
}

TEST(DeploymentFile, AProfileIsAWorkerWithGivenCosts) {
  Deployment d = load_deployment((kProfiles / "deployments" / "profile-replicas.yaml").string());
  EngineProfile profile = load_engine_profile((kProfiles / "llama-3.1-8b-h100.yaml").string());
  ASSERT_TRUE(d.workers[0].given_costs);
  // The same request alone gets the same times as from today's engine model, plus the
  // frontend's one chunk per token (without the deployment's step-time noise, which the single
  // engine does not have).
  EXPECT_EQ(d.workers[0].step_time_cv, kDefaultStepTimeCv);
  d.workers[0].step_time_cv = 0;
  auto engine = make_engine_model(profile);
  std::vector<TokenEvent> b;
  engine->add(7, {1000, 5}, 0);
  while (auto due = engine->next_due_ns()) engine->pop_due(*due, b);
  for (int64_t chunk_ns : {kDefaultOutputNsPerChunk, int64_t{0}}) {
    ASSERT_EQ(d.frontends[0].output_ns_per_chunk, chunk_ns);
    auto deployed = make_deployment_model(d);
    std::vector<TokenEvent> a;
    deployed->frontend(0).add(7, {1000, 5}, 0);
    while (auto due = deployed->frontend(0).next_due_ns()) deployed->frontend(0).pop_due(*due, a);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].due_ns, b[i].due_ns + chunk_ns);
    d.frontends[0].output_ns_per_chunk = 0;
  }
}

TEST(DeploymentFile, AModelFromAConfigJsonBesideTheFile) {
  fs::path dir = fs::temp_directory_path() / "servebench_deploy_config";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "config.json")
      << R"({"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
             "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256})";
  std::ofstream(dir / "dep.yaml") << "model: {config: config.json}\ngpu: H100\nworkers:\n  - "
                                     "{name: w}\n";
  Deployment d = load_deployment((dir / "dep.yaml").string());
  EXPECT_EQ(model_sizes(d.model).weight_bytes,
            model_sizes(*builtin_model("Llama-3.1-8B")).weight_bytes);
  std::string why = refusal("model: {hf: org/not-cached}\ngpu: H100\nworkers:\n  - {name: w}\n");
  EXPECT_NE(why.find("key 'model.hf': 'org/not-cached' has no config.json in the local Hugging "
                     "Face cache"),
            std::string::npos)
      << why;
}

TEST(DeploymentFile, GivenGpusAndLinksAreUsedByName) {
  Deployment d = parse_deployment(R"(model: {builtin: Llama-3.1-8B, dtype: fp8}
gpus:
  X1: {hbm_GBps: 2000, bf16_TFLOPS: 400, fp8_TFLOPS: 800, memory_GiB: 64, sms: 100}
links:
  slow-ib: {GBps: 10, latency_us: 50}
nodes:
  - {name: n, count: 2, gpu: X1, gpus: 1, network: slow-ib}
workers:
  - {name: w, pp: 2}
)",
                                  "given.yaml");
  const WorkerHardware& hw = d.workers[0].hardware;
  EXPECT_EQ(hw.gpu.hbm_bytes_per_s, 2000e9);
  EXPECT_EQ(hw.model.bytes_per_param, 1);
  ASSERT_EQ(hw.pp_hops.size(), 1u);
  EXPECT_EQ(hw.pp_hops[0].bytes_per_s, 10e9);
  EXPECT_EQ(hw.pp_hops[0].latency_ns, 50'000);
}

constexpr const char* kOneWorker = R"(model: Llama-3.1-70B
gpu: A100-40GB
workers:
  - name: w
    tp: 8
)";

TEST(DeploymentFile, AModelThatDoesNotFitIsRefusedNamingTheKey) {
  std::string why = refusal(R"(model: Llama-3.1-70B
gpu: A100-40GB
workers:
  - name: w
    tp: 2
)");
  EXPECT_NE(why.find("dep.yaml:5"), std::string::npos) << why;
  EXPECT_NE(why.find("workers[0].tp"), std::string::npos) << why;
  EXPECT_NE(why.find("does not fit: 70.6 GB of weights per GPU, 35.4 GB usable per A100-40GB"),
            std::string::npos)
      << why;
  EXPECT_EQ(refusal(kOneWorker), "");
}

TEST(DeploymentFile, TpThatDoesNotDivideTheHeadsIsRefused) {
  std::string why = refusal(R"(model: Llama-3.1-8B
gpu: H100
workers:
  - {name: w, tp: 3}
)");
  EXPECT_NE(why.find("workers[0].tp"), std::string::npos) << why;
  EXPECT_NE(why.find("does not divide the model's 32 attention heads"), std::string::npos) << why;
}

TEST(DeploymentFile, UnknownNamesAndKeysAreRefusedWithWhatIsKnown) {
  std::string gpu = refusal("model: Llama-3.1-8B\ngpu: B300\nworkers:\n  - {name: w}\n");
  EXPECT_NE(gpu.find("dep.yaml:2: key 'gpu': unknown GPU 'B300' (built in: A100-40GB"),
            std::string::npos)
      << gpu;
  std::string model = refusal("model: Llama-9\ngpu: H100\nworkers:\n  - {name: w}\n");
  EXPECT_NE(model.find("key 'model': unknown model 'Llama-9'"), std::string::npos) << model;
  std::string key = refusal("model: Llama-3.1-8B\ngpu: H100\nworkers:\n  - {name: w, tpp: 2}\n");
  EXPECT_NE(key.find("key 'workers[0].tpp': unknown key"), std::string::npos) << key;
  std::string link = refusal(
      "model: Llama-3.1-8B\nnodes:\n  - {gpu: H100, network: carrier-pigeon}\nworkers:\n  - "
      "{name: w}\n");
  EXPECT_NE(link.find("nodes[0].network"), std::string::npos) << link;
  std::string router = refusal(
      "model: Llama-3.1-8B\ngpu: H100\nworkers:\n  - {name: w}\nrouters:\n  - {name: r, "
      "policy: random, workers: [w]}\n");
  EXPECT_NE(router.find("routers[0].policy"), std::string::npos) << router;
}

TEST(DeploymentFile, MoreReplicasThanGpusIsRefused) {
  std::string why = refusal(R"(model: Llama-3.1-8B
gpu: H100
gpus_per_node: 8
workers:
  - {name: w, tp: 4, replicas: 3}
)");
  EXPECT_NE(why.find("workers[0].replicas"), std::string::npos) << why;
  EXPECT_NE(why.find("do not fit the free GPUs"), std::string::npos) << why;
}

TEST(DeploymentFile, SharedGpusMustHoldEveryCoTenantsMemory) {
  std::string why = refusal(R"(model: Llama-3.1-8B
gpu: H100
gpus_per_node: 1
workers:
  - {name: a}
  - {name: b}
shared_gpus:
  - {mode: mps, workers: [a, b]}
)");
  EXPECT_NE(why.find("shared_gpus[0].workers"), std::string::npos) << why;
  EXPECT_NE(why.find("gpu_memory_utilization"), std::string::npos) << why;
}

TEST(DeploymentFile, ADisaggregatedRouterNeedsBothPools) {
  std::string why = refusal(R"(model: Llama-3.1-8B
gpu: H100
workers:
  - {name: p}
routers:
  - {name: r, prefill: [p]}
)");
  EXPECT_NE(why.find("routers[0].workers"), std::string::npos) << why;
}

}  // namespace
}  // namespace servebench::sim::deploy
