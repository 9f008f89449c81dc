// How load shapes TTFT, TPOT and throughput in the engine model, for the shipped profiles.
// Prints the table in docs/engine-model.md (run: sim_model_tests --gtest_filter='EngineLoad*')
// and asserts the shape: more concurrency → longer steps → higher TPOT, more throughput;
// queueing and prefill interference → higher TTFT; a small KV cache → preemptions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "sim/model/timing_model.h"

namespace servebench::sim {
namespace {

struct LoadResult {
  double mean_ttft_ms = 0;
  double mean_tpot_ms = 0;
  double output_tokens_per_s = 0;
  uint64_t preemptions = 0;
};

constexpr int kRequestsPerClient = 4;
constexpr RequestShape kShape{1000, 200};

// `concurrency` clients, all starting at t = 0, each sending kRequestsPerClient requests back
// to back (the next one arrives when the previous one's last token is due), like
// `vllm bench serve --max-concurrency N` with an infinite request rate.
LoadResult closed_loop(const EngineProfile& profile, int concurrency) {
  auto model = make_engine_model(profile);
  std::vector<int64_t> arrival;
  std::vector<int64_t> first_due;
  std::vector<int> sent(static_cast<size_t>(concurrency), 1);
  auto send = [&](int64_t at) {
    arrival.push_back(at);
    first_due.push_back(-1);
    model->add(arrival.size() - 1, kShape, at);
  };
  std::vector<int> client_of;  // by request id
  for (int c = 0; c < concurrency; ++c) {
    client_of.push_back(c);
    send(0);
  }
  double ttft_sum = 0;
  double tpot_sum = 0;
  int64_t tokens = 0;
  int64_t end_ns = 0;
  std::vector<TokenEvent> out;
  while (auto due = model->next_due_ns()) {
    out.clear();
    model->pop_due(*due, out);
    for (const TokenEvent& e : out) {
      ++tokens;
      if (e.token_index == 0) {
        first_due[e.request_id] = e.due_ns;
        ttft_sum += static_cast<double>(e.due_ns - arrival[e.request_id]);
      }
      if (!e.last) continue;
      tpot_sum +=
          static_cast<double>(e.due_ns - first_due[e.request_id]) / (kShape.output_tokens - 1);
      end_ns = e.due_ns;
      int c = client_of[e.request_id];
      if (sent[static_cast<size_t>(c)] < kRequestsPerClient) {
        ++sent[static_cast<size_t>(c)];
        client_of.push_back(c);
        send(e.due_ns);
      }
    }
  }
  auto n = static_cast<double>(arrival.size());
  EXPECT_EQ(tokens, static_cast<int64_t>(arrival.size()) * kShape.output_tokens);
  return LoadResult{ttft_sum / n / 1e6, tpot_sum / n / 1e6,
                    static_cast<double>(tokens) / (static_cast<double>(end_ns) / 1e9),
                    model->stats().preemptions};
}

TEST(EngineLoad, TableForDocs) {
  const std::filesystem::path dir = std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "profiles";
  const int kConcurrency[] = {1, 8, 32, 128, 512};
  std::printf(
      "| profile | concurrency | mean TTFT ms | mean TPOT ms | output tok/s | "
      "preemptions |\n|---|---:|---:|---:|---:|---:|\n");
  for (const char* file : {"default", "llama-3.1-8b-h100", "llama-3.1-70b-h100-tp8", "tiny-kv"}) {
    EngineProfile profile = load_engine_profile((dir / (std::string(file) + ".yaml")).string());
    LoadResult prev;
    for (int c : kConcurrency) {
      LoadResult r = closed_loop(profile, c);
      std::printf("| %s | %d | %.1f | %.2f | %.0f | %llu |\n", file, c, r.mean_ttft_ms,
                  r.mean_tpot_ms, r.output_tokens_per_s,
                  static_cast<unsigned long long>(r.preemptions));
      const std::string name = file;
      if (c > 1 && name != "tiny-kv") {
        EXPECT_GT(r.mean_tpot_ms, prev.mean_tpot_ms) << file << " " << c;
        EXPECT_GT(r.mean_ttft_ms, prev.mean_ttft_ms) << file << " " << c;
        if (c <= 128) {
          EXPECT_GT(r.output_tokens_per_s, prev.output_tokens_per_s) << file << " " << c;
        }
      }
      // Preempted exactly when the clients' KV (c x 1199 tokens at the end of their answers)
      // outgrows the cache: tiny-kv 8,192 tokens, default 262,144, 8B 400,000, 70B 1.2 M.
      int64_t kv_tokens = int64_t{profile.num_gpu_blocks} * profile.block_size;
      int64_t running = std::min(c, profile.max_num_seqs);
      EXPECT_EQ(r.preemptions > 0, running * 1199 > kv_tokens) << file << " " << c;
      prev = r;
    }
  }
}

struct OpenLoopResult {
  double mean_ttft_ms = 0;
  double max_ttft_ms = 0;
  double mean_tpot_ms = 0;
  uint64_t preemptions = 0;
};

// Open loop: kRequests Poisson arrivals at `rate_per_s` (seeded), like
// `vllm bench serve --request-rate R`.
OpenLoopResult open_loop(const EngineProfile& profile, double rate_per_s) {
  constexpr int kRequests = 400;
  auto model = make_engine_model(profile);
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> gap_s(rate_per_s);
  std::vector<int64_t> arrival;
  double t = 0;
  for (int i = 0; i < kRequests; ++i) {
    t += gap_s(rng);
    arrival.push_back(static_cast<int64_t>(t * 1e9));
    model->add(static_cast<uint64_t>(i), kShape, arrival.back());
  }
  OpenLoopResult r;
  std::vector<int64_t> first_due(kRequests);
  std::vector<TokenEvent> out;
  while (auto due = model->next_due_ns()) {
    out.clear();
    model->pop_due(*due, out);
    for (const TokenEvent& e : out) {
      if (e.token_index == 0) {
        first_due[e.request_id] = e.due_ns;
        double ttft_ms = static_cast<double>(e.due_ns - arrival[e.request_id]) / 1e6;
        r.mean_ttft_ms += ttft_ms / kRequests;
        r.max_ttft_ms = std::max(r.max_ttft_ms, ttft_ms);
      }
      if (e.last) {
        r.mean_tpot_ms += static_cast<double>(e.due_ns - first_due[e.request_id]) / 1e6 /
                          (kShape.output_tokens - 1) / kRequests;
      }
    }
  }
  r.preemptions = model->stats().preemptions;
  return r;
}

TEST(EngineLoad, LatencyRisesAsTheRequestRateNearsCapacity) {
  const std::filesystem::path dir = std::filesystem::path(SERVEBENCH_SOURCE_DIR) / "profiles";
  EngineProfile profile = load_engine_profile((dir / "llama-3.1-8b-h100.yaml").string());
  std::printf(
      "| request rate /s | mean TTFT ms | max TTFT ms | mean TPOT ms | preemptions "
      "|\n|---:|---:|---:|---:|---:|\n");
  OpenLoopResult prev;
  for (double rate : {1.0, 4.0, 8.0, 12.0, 16.0, 20.0, 32.0}) {
    OpenLoopResult r = open_loop(profile, rate);
    std::printf("| %.0f | %.1f | %.1f | %.2f | %llu |\n", rate, r.mean_ttft_ms, r.max_ttft_ms,
                r.mean_tpot_ms, static_cast<unsigned long long>(r.preemptions));
    EXPECT_GT(r.mean_ttft_ms, prev.mean_ttft_ms) << rate;
    EXPECT_GT(r.mean_tpot_ms, prev.mean_tpot_ms) << rate;
    prev = r;
  }
}

}  // namespace
}  // namespace servebench::sim
