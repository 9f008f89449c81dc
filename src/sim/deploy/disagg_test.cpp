// Disaggregated prefill/decode (xPyD), after seed 004's Dynamo 3P1D example file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/deploy/deploy.h"
#include "sim/deploy/load_driver.h"

namespace servebench::sim::deploy {
namespace {

const std::string kDynamo = (std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "profiles" /
                             "deployments" / "seed004-qwen3-32b-h20-dynamo-3p1d.yaml")
                                .string();

std::string dynamo_text() {
  std::ifstream in(kDynamo);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Disaggregated, TheFirstTokenComesFromTheDecodeWorkerAfterTheKvTransfer) {
  Deployment spec = load_deployment(kDynamo);
  auto d = make_deployment_model(spec);
  FrontendModel& fe = d->frontend(0);
  fe.add(1, {3000, 150}, 0);
  std::vector<TokenEvent> out;
  std::optional<RequestRoute> route;
  while (out.empty()) {
    fe.pop_due(*fe.next_due_ns(), out);
    route = fe.route(1);
  }
  ASSERT_TRUE(route);
  EXPECT_EQ(route->prefill_worker, "prefill");
  EXPECT_EQ(route->worker, "decode");
  // 3000 tokens × 256 KiB, over four GPUs' links at 15.6 GB/s × 0.8, after 10 ms.
  EXPECT_EQ(route->kv_transfer_bytes, 3000.0 * 262144);
  const double transfer_ms = 10 + 3000.0 * 262144 / (4 * 15.6e9 * 0.8) * 1e3;
  EXPECT_NEAR((route->kv_transfer_end_ns - route->kv_transfer_start_ns) / 1e6, transfer_ms, 0.01);
  // The prefill (10 ms frontend, ~480 ms step) ends before the transfer; the decode
  // worker's first step (~20 ms) after it.
  EXPECT_GT(route->kv_transfer_start_ns, 400'000'000);
  const double first_step_ms = (out[0].due_ns - route->kv_transfer_end_ns) / 1e6;
  EXPECT_GT(first_step_ms, 15);
  EXPECT_LT(first_step_ms, 25);
  EXPECT_EQ(out[0].token_index, 0);
  while (auto due = fe.next_due_ns()) fe.pop_due(*due, out);
  EXPECT_EQ(out.size(), 150u);
  EXPECT_EQ(d->worker_states()[0].counters.generation_tokens, 1u);  // the prefill's own token
}

TEST(Disaggregated, ThroughputSaturatesAtThePrefillPoolWhileTpotStaysFlat) {
  struct Point {
    int c;
    LoadSummary s;
  };
  std::vector<Point> points;
  for (int c : {8, 32, 64, 128}) {
    auto d = make_deployment_model(load_deployment(kDynamo));
    LoadDriver driver({&d->frontend(0)});
    auto done = driver.closed_loop({c}, 6, [](size_t, int) {
      return Job{0, {3000, 150}, 0, 0, 0};
    });
    points.push_back({c, summarize(done)});
    std::printf("3P1D 3000:150 c=%d: %.2f req/s, TTFT %.0f ms, TPOT %.1f ms\n", c,
                points.back().s.requests_per_s, points.back().s.mean_ttft_ms,
                points.back().s.mean_tpot_ms);
  }
  const LoadSummary& c32 = points[1].s;
  const LoadSummary& c64 = points[2].s;
  const LoadSummary& c128 = points[3].s;
  // Three prefill workers of ~0.48 s a prompt: ~6.2 req/s (seed 004: 6.13).
  EXPECT_NEAR(c128.requests_per_s, 6.2, 0.8);
  EXPECT_NEAR(c64.requests_per_s / c128.requests_per_s, 1.0, 0.1);
  EXPECT_LT(points[0].s.requests_per_s, 0.9 * c64.requests_per_s);  // c=8 is below it
  // The decode worker is far from busy: TPOT hardly moves (seed 004: ≤ 33 ms at c=128).
  EXPECT_LT(c128.mean_tpot_ms / points[0].s.mean_tpot_ms, 1.3);
  // Past saturation TTFT grows linearly with c (Little): doubling c adds as much again.
  const double step_32_64 = c64.mean_ttft_ms - c32.mean_ttft_ms;
  const double step_64_128 = c128.mean_ttft_ms - c64.mean_ttft_ms;
  EXPECT_NEAR(step_64_128 / step_32_64, 2.0, 0.5);
}

// xPyD with `prefills` prefill replicas and two decode replicas, the KV link's latency 0.1 ms,
// no noise: two 3000-token prompts at 0 are prefilled in one step (one prefill replica) or
// in two equal steps (two), and round-robin sends their KV to the two decode replicas.
std::vector<RequestRoute> two_transfers(int prefills, std::vector<int> prompts) {
  const int requests = static_cast<int>(prompts.size());
  std::string text = dynamo_text();
  text.replace(text.find("latency_us: 10000"), 17, "latency_us: 100");
  text.replace(text.find("replicas: 3"), 11, "replicas: " + std::to_string(prefills));
  text.replace(text.find("  - name: decode\n"), 17, "  - name: decode\n    replicas: 2\n");
  for (size_t at = 0; (at = text.find("    tp: 4\n", at)) != std::string::npos; at += 10) {
    text.insert(at, "    step_time_cv: 0\n");
    at += 20;
  }
  auto d = make_deployment_model(parse_deployment(text, "two-transfers.yaml"));
  FrontendModel& fe = d->frontend(0);
  for (int i = 1; i <= requests; ++i)
    fe.add(static_cast<uint64_t>(i), {prompts[static_cast<size_t>(i - 1)], 2}, 0);
  std::vector<RequestRoute> routes(static_cast<size_t>(requests));
  std::vector<TokenEvent> out;
  while (auto due = fe.next_due_ns()) {
    for (int i = 1; i <= requests; ++i) {
      if (auto r = fe.route(static_cast<uint64_t>(i))) routes[static_cast<size_t>(i - 1)] = *r;
    }
    fe.pop_due(*due, out);
  }
  EXPECT_EQ(out.size(), 2u * static_cast<size_t>(requests));
  return routes;
}

double transfer_ms(const RequestRoute& r) {
  return static_cast<double>(r.kv_transfer_end_ns - r.kv_transfer_start_ns) / 1e6;
}

TEST(Disaggregated, KvTransfersOverOneLinkShareItsBandwidth) {
  // 3000 tokens × 256 KiB over four GPUs' links at 15.6 GB/s × 0.8: 15.75 ms, + 0.1 ms.
  const double alone_ms = 0.1 + 3000.0 * 262144 / (4 * 15.6e9 * 0.8) * 1e3;
  const RequestRoute one = two_transfers(1, {3000})[0];
  EXPECT_NEAR(transfer_ms(one), alone_ms, 0.01);
  // One prefill replica sends both caches at once over its links: each takes twice as long.
  const auto shared = two_transfers(1, {3000, 3000});
  for (const RequestRoute& r : shared) {
    EXPECT_EQ(r.prefill_replica, 0);
    EXPECT_EQ(r.kv_transfer_start_ns, shared[0].kv_transfer_start_ns);
    EXPECT_NEAR(transfer_ms(r), 0.1 + 2 * (alone_ms - 0.1), 0.01);
  }
  EXPECT_NE(shared[0].replica, shared[1].replica);
  // Two prefill replicas to two decode replicas: separate links, no slower than alone.
  const auto separate = two_transfers(2, {3000, 3000});
  EXPECT_NE(separate[0].prefill_replica, separate[1].prefill_replica);
  EXPECT_EQ(separate[0].kv_transfer_start_ns, separate[1].kv_transfer_start_ns);
  for (const RequestRoute& r : separate) EXPECT_NEAR(transfer_ms(r), alone_ms, 0.01);
}

TEST(Disaggregated, AKvTransferSpeedsUpWhenTheOneSharingItsLinkEnds) {
  // 3000 and 1500 tokens leave one prefill replica together: both at half the bandwidth until
  // the short one is done at T (the long one's time alone), then the long one's second half
  // at full bandwidth: T / 2 more.
  const double t_ms = 3000.0 * 262144 / (4 * 15.6e9 * 0.8) * 1e3;
  const auto routes = two_transfers(1, {3000, 1500});
  EXPECT_NEAR(transfer_ms(routes[1]), 0.1 + t_ms, 0.01);
  EXPECT_NEAR(transfer_ms(routes[0]), 0.1 + 1.5 * t_ms, 0.01);
}

TEST(Disaggregated, ConditionalDisaggregationPrefillsShortPromptsLocally) {
  std::string text = dynamo_text();
  text.replace(text.find("    kv_link: kv-rdma"), 0, "    local_prefill_max_tokens: 1000\n");
  auto d = make_deployment_model(parse_deployment(text, "conditional.yaml"));
  FrontendModel& fe = d->frontend(0);
  fe.add(1, {500, 4}, 0);
  fe.add(2, {3000, 4}, 0);
  ASSERT_TRUE(fe.route(1) && fe.route(2));
  EXPECT_EQ(fe.route(1)->prefill_worker, "");
  EXPECT_EQ(fe.route(1)->worker, "decode");
  EXPECT_EQ(fe.route(2)->prefill_worker, "prefill");
  std::vector<TokenEvent> out;
  while (auto due = fe.next_due_ns()) fe.pop_due(*due, out);
  EXPECT_EQ(out.size(), 8u);
}

TEST(Disaggregated, CancelDuringTheKvTransferForgetsTheRequest) {
  auto d = make_deployment_model(load_deployment(kDynamo));
  FrontendModel& fe = d->frontend(0);
  fe.add(1, {3000, 50}, 0);
  std::vector<TokenEvent> out;
  int64_t now = *fe.next_due_ns();  // the prefill's end
  fe.pop_due(now, out);
  ASSERT_TRUE(out.empty());
  ASSERT_GT(fe.route(1)->kv_transfer_end_ns, now);
  fe.cancel(1);
  EXPECT_FALSE(fe.route(1));
  EXPECT_FALSE(fe.next_due_ns());
  for (const WorkerState& w : d->worker_states()) EXPECT_EQ(w.stats.waiting + w.stats.running, 0);
}

}  // namespace
}  // namespace servebench::sim::deploy
