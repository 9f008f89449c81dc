// File: bench/micro/metrics_bench.cpp
// metrics::compute on 100k records of 64 chunks each: the end-of-run cost of vLLM's metrics
// and servebench's extras.
#include <benchmark/benchmark.h>

#include <vector>

#include "metrics/metrics.h"
#include "record/record.h"

namespace {

using servebench::record::RequestRecord;

std::vector<RequestRecord> make_records(size_t n, int chunks) {
  std::vector<RequestRecord> records(n);
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>(state >> 44);  // 0 .. 2^20
  };
  for (size_t i = 0; i < n; ++i) {
    RequestRecord& r = records[i];
    r.index = i;
    r.request_id = "servebench-" + std::to_string(i);
    r.intended_ns = static_cast<int64_t>(i) * 100'000;
    r.sent_ns = r.intended_ns + next() % 5'000;
    r.first_byte_ns = r.sent_ns + 30'000'000 + next() * 10;
    int64_t t = r.first_byte_ns + 50'000;
    for (int k = 0; k < chunks; ++k) {
      r.chunk_ns.push_back(t);
      r.chunk_tokens.push_back(1);
      t += 9'000'000 + next() * 2;
    }
    r.first_token_ns = r.chunk_ns.front();
    r.last_token_ns = r.chunk_ns.back();
    r.done_ns = r.last_token_ns + 20'000;
    r.prompt_tokens = 1024;
    r.expected_output_tokens = chunks;
    r.server_prompt_tokens = 1024;
    r.server_completion_tokens = chunks;
    r.http_status = 200;
    r.success = (i % 1000) != 999;  // a few failures, as a real run has
    if (!r.success) r.error = "HTTP 503";
  }
  return records;
}

void BM_MetricsCompute(benchmark::State& state) {
  static const std::vector<RequestRecord> records = make_records(100'000, 64);
  servebench::metrics::Options options;
  options.percentiles = {50, 90, 99, 99.9};
  options.goodput_slo_ms = {{"ttft", 100}, {"tpot", 12}};
  for (auto _ : state) {
    auto summary = servebench::metrics::compute(records, 120.0, options);
    benchmark::DoNotOptimize(summary.vllm.completed);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * records.size()));
}

BENCHMARK(BM_MetricsCompute)->Unit(benchmark::kMillisecond);

}  // namespace
