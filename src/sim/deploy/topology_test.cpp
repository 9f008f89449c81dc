// Replicas behind routers, pipelines over a network, frontends, speculative decoding: the
// behaviours issue 16 lists, on made-up clocks (load_driver.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "sim/deploy/deploy.h"
#include "sim/deploy/load_driver.h"

namespace servebench::sim::deploy {
namespace {

const std::filesystem::path kExamples =
    std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "profiles" / "deployments";

std::unique_ptr<DeploymentModel> example(const char* file) {
  return make_deployment_model(load_deployment((kExamples / file).string()));
}

LoadSummary closed(FrontendModel& fe, int clients, int per_client, RequestShape shape) {
  LoadDriver driver({&fe});
  return summarize(driver.closed_loop({clients}, per_client, [&](size_t, int) {
    return Job{0, shape, 0, 0, 0};
  }));
}

// Qwen3-32B, TP4 on H20, with the Dynamo decode worker's 13 ms step (seed 004).
constexpr const char* kQwenH20 = R"(model: Qwen3-32B
gpu: H20
workers:
  - name: w
    tp: 4
    overheads: {step_us: 13000, per_seq_us: 100, allreduce_us: 15}
)";

TEST(Topology, TpotAtConcurrencyOneIsFlatAcrossInputLengths) {
  std::vector<double> tpot;
  for (int isl : {500, 1000, 2500, 3000}) {
    auto d = make_deployment_model(parse_deployment(kQwenH20, "qwen.yaml"));
    tpot.push_back(closed(d->frontend(0), 1, 2, {isl, 150}).mean_tpot_ms);
  }
  auto [lo, hi] = std::minmax_element(tpot.begin(), tpot.end());
  EXPECT_LT(*hi / *lo, 1.02) << *lo << " " << *hi;
  EXPECT_NEAR(*lo, 20.1, 1.0);  // seed 004's Dynamo decode at c=1: 20.08–20.30 ms
}

TEST(Topology, DecodeTurnsComputeBoundOnH20NearBatch64) {
  std::vector<std::pair<int, double>> tpot;
  for (int c : {1, 16, 32, 64, 128}) {
    auto d = make_deployment_model(parse_deployment(kQwenH20, "qwen.yaml"));
    tpot.emplace_back(c, closed(d->frontend(0), c, 2, {100, 400}).mean_tpot_ms);
    std::printf("H20 TP4 decode c=%d: TPOT %.1f ms\n", c, tpot.back().second);
  }
  EXPECT_LT(tpot[1].second / tpot[0].second, 1.25);  // c=16: still the weights' time
  // From 64 on each doubling of the batch adds about as much again: the GEMMs' FLOPs.
  EXPECT_GT(tpot[4].second / tpot[3].second, 1.4);
  EXPECT_GT(tpot[4].second - tpot[3].second, 3 * (tpot[2].second - tpot[1].second) / 2);
}

TEST(Topology, Pp2OverTwoNodesRoughlyDoublesTpotAtLowLoad) {
  auto tp8 = example("seed000-llama-70b-a100-tp8.yaml");
  auto pp2 = example("seed000-llama-70b-a100-tp4-pp2-ib.yaml");
  double one = closed(tp8->frontend(0), 1, 3, {213, 214}).mean_tpot_ms;
  double two = closed(pp2->frontend(0), 1, 3, {213, 214}).mean_tpot_ms;
  std::printf("seed 000 c=1 TPOT: TP8 %.1f ms, TP4xPP2 %.1f ms\n", one, two);
  EXPECT_GT(two / one, 1.6);  // seed 000: 44.1 vs 24.6 ms
  EXPECT_LT(two / one, 2.1);
}

// Poisson arrivals at `rate` of ShareGPT-like requests (213 in, 214 out on average).
std::vector<Job> poisson(double rate, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate);
  std::uniform_int_distribution<int> len(100, 326);
  std::vector<Job> jobs;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += gap(rng);
    jobs.push_back(Job{0, {len(rng), len(rng)}, static_cast<int64_t>(t * 1e9), 0, 0});
  }
  return jobs;
}

TEST(Topology, InfinibandVersusEthernetChangesPipelineTpotByAFewPercent) {
  auto ib = example("seed000-llama-70b-a100-tp4-pp2-ib.yaml");
  auto eth = example("seed000-llama-70b-a100-tp4-pp2-no-ib.yaml");
  LoadDriver on_ib({&ib->frontend(0)});
  LoadDriver on_eth({&eth->frontend(0)});
  LoadSummary a = summarize(on_ib.open_loop(poisson(4, 400, 3)));
  LoadSummary b = summarize(on_eth.open_loop(poisson(4, 400, 3)));
  std::printf("seed 000 PP2 at 4 req/s: TPOT IB %.1f ms, Ethernet %.1f ms\n", a.mean_tpot_ms,
              b.mean_tpot_ms);
  EXPECT_GT(b.mean_tpot_ms / a.mean_tpot_ms, 1.005);  // seed 000: +4 % at QPS 16
  EXPECT_LT(b.mean_tpot_ms / a.mean_tpot_ms, 1.10);
}

// `replicas` H100 replicas of Llama-3.1-8B behind a router of `policy`.
std::unique_ptr<DeploymentModel> replicas_behind(int replicas, const std::string& policy) {
  return make_deployment_model(
      parse_deployment("model: Llama-3.1-8B\ngpu: H100\nworkers:\n  - {name: w, replicas: " +
                           std::to_string(replicas) +
                           "}\nrouters:\n  - {name: r, workers: [w], policy: " + policy + "}\n",
                       "replicas.yaml"));
}

// Two H100 replicas of Llama-3.1-8B behind `policy`; long and short answers alternate.
std::vector<WorkerState> skewed_load(const char* policy) {
  auto d = replicas_behind(2, policy);
  std::vector<Job> jobs;
  for (int i = 0; i < 200; ++i) {
    jobs.push_back(Job{0, {200, i % 2 == 0 ? 400 : 8}, i * 50'000'000LL, 0, 0});
  }
  LoadDriver driver({&d->frontend(0)});
  EXPECT_EQ(driver.open_loop(jobs).size(), 200u);
  return d->worker_states();
}

double imbalance(const std::vector<WorkerState>& states) {
  auto [lo, hi] = std::minmax_element(states.begin(), states.end(), [](auto& a, auto& b) {
    return a.counters.generation_tokens < b.counters.generation_tokens;
  });
  return static_cast<double>(hi->counters.generation_tokens) /
         static_cast<double>(lo->counters.generation_tokens);
}

TEST(Topology, RoundRobinUnderSkewLoadsOneReplicaLeastOutstandingSpreadsIt) {
  double rr = imbalance(skewed_load("round_robin"));
  double lor = imbalance(skewed_load("least_outstanding"));
  std::printf("generation tokens max/min: round robin %.1f, least outstanding %.2f\n", rr, lor);
  EXPECT_GT(rr, 20);  // every long answer on replica 0
  EXPECT_LT(lor, 1.5);
}

TEST(Topology, KvAwareRoutingSendsASharedPrefixBackToItsCache) {
  auto run = [](const char* policy) {
    auto d = replicas_behind(4, policy);
    std::vector<Job> jobs;
    // Three system prompts of 2000 tokens, in turn, one request at a time (else Dynamo's cost
    // may prefer an idle replica to a busy one holding the prefix).
    for (int i = 0; i < 60; ++i) {
      jobs.push_back(Job{0, {2100, 20}, i * 500'000'000LL, static_cast<uint64_t>(i % 3 + 1), 2000});
    }
    LoadDriver driver({&d->frontend(0)});
    LoadSummary s = summarize(driver.open_loop(jobs));
    uint64_t prompt_tokens = 0;
    for (const WorkerState& w : d->worker_states()) prompt_tokens += w.counters.prompt_tokens;
    return std::pair{s, prompt_tokens};
  };
  auto [kv, kv_prompt] = run("kv_aware");
  auto [rr, rr_prompt] = run("round_robin");
  // KV-aware: each prefix computed once, then 100 new tokens a request.
  EXPECT_EQ(kv_prompt, 3u * 2100u + 57u * 100u);
  EXPECT_GT(rr_prompt, 2 * kv_prompt);  // 3 prefixes over 4 replicas: cached on each in turn
  EXPECT_LT(kv.mean_ttft_ms, rr.mean_ttft_ms);
}

TEST(Topology, EachFrontendIsItsOwnTimingModelWithItsOwnIds) {
  auto d = make_deployment_model(parse_deployment(R"(model: Llama-3.1-8B
gpu: H100
workers:
  - {name: a, step_time_cv: 0}
  - {name: b, step_time_cv: 0}
routers:
  - {name: ra, workers: [a]}
  - {name: rb, workers: [b]}
frontends:
  - {name: one, router: ra}
  - {name: two, router: rb, request_overhead_us: 5000}
)",
                                                  "two.yaml"));
  ASSERT_EQ(d->frontend_count(), 2u);
  EXPECT_EQ(d->frontend_spec(1).name, "two");
  d->frontend(0).add(1, {100, 3}, 0);
  d->frontend(1).add(1, {100, 5}, 0);  // the same id at another frontend is another request
  std::vector<TokenEvent> one, two;
  for (int i = 0; i < 100; ++i) {
    auto a = d->frontend(0).next_due_ns();
    auto b = d->frontend(1).next_due_ns();
    if (!a && !b) break;
    int64_t now = std::min(a.value_or(INT64_MAX), b.value_or(INT64_MAX));
    d->frontend(0).pop_due(now, one);
    d->frontend(1).pop_due(now, two);
  }
  ASSERT_EQ(one.size(), 3u);
  ASSERT_EQ(two.size(), 5u);
  EXPECT_EQ(two[0].due_ns - one[0].due_ns, 5'000'000);  // the second frontend's overhead
  EXPECT_EQ(d->worker_states()[0].counters.generation_tokens, 3u);
  EXPECT_EQ(d->worker_states()[1].counters.generation_tokens, 5u);
}

TEST(Topology, SpeculativeDecodingRaisesTokensPerStepByTheAcceptanceRate) {
  auto spec = example("llama-8b-h100-kv-router-spec.yaml");
  LoadDriver driver({&spec->frontend(0)});
  auto done = driver.closed_loop({4}, 5, [](size_t, int) { return Job{0, {500, 301}, 0, 0, 0}; });
  double tokens = 0, steps = 0;
  for (const Finished& f : done) {
    tokens += f.tokens - 1;  // after the first token, which the prefill samples alone
    steps += f.distinct_due_times - 1;
  }
  // 3 drafts at 70 %: 1 + 0.7 + 0.49 + 0.343 = 2.53 tokens a step, in one chunk each.
  EXPECT_NEAR(tokens / steps, 2.53, 0.15);
  uint64_t drafts = 0, accepted = 0;
  for (const WorkerState& w : spec->worker_states()) {
    drafts += w.counters.spec_draft_tokens;
    accepted += w.counters.spec_accepted_tokens;
  }
  EXPECT_NEAR(static_cast<double>(accepted) / static_cast<double>(drafts), 1.533 / 3, 0.03);
}

}  // namespace
}  // namespace servebench::sim::deploy
