// File: bench/micro/record_bench.cpp
// record::to_json_line / from_json_line on a typical streamed request (256 chunks): the cost of
// the per-request JSONL line the run command appends as each request finishes.
#include <benchmark/benchmark.h>

#include <string>

#include "record/record.h"

namespace {

using servebench::record::RequestRecord;

RequestRecord typical_record(int chunks) {
  RequestRecord r;
  r.index = 4242;
  r.request_id = "servebench-4242";
  r.intended_ns = 1'234'567'890;
  r.sent_ns = r.intended_ns + 1'500;
  r.first_byte_ns = r.sent_ns + 40'000'000;
  for (int i = 0; i < chunks; ++i) {
    r.chunk_ns.push_back(r.first_byte_ns + 100'000 + int64_t{i} * 10'000'000 + (i * 7919) % 50'000);
    r.chunk_tokens.push_back(1);
    r.generated_text += " tokaba";
  }
  r.first_token_ns = r.chunk_ns.front();
  r.last_token_ns = r.chunk_ns.back();
  r.done_ns = r.last_token_ns + 30'000;
  r.prompt_tokens = 1024;
  r.expected_output_tokens = chunks;
  r.server_prompt_tokens = 1024;
  r.server_completion_tokens = chunks;
  r.client_output_tokens = chunks;
  r.http_status = 200;
  r.success = true;
  return r;
}

void BM_RecordToJsonLine(benchmark::State& state) {
  const RequestRecord r = typical_record(static_cast<int>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string line = servebench::record::to_json_line(r);
    bytes += line.size();
    benchmark::DoNotOptimize(line.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

void BM_RecordFromJsonLine(benchmark::State& state) {
  const std::string line =
      servebench::record::to_json_line(typical_record(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    RequestRecord r = servebench::record::from_json_line(line, "bench");
    benchmark::DoNotOptimize(r.chunk_ns.data());
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * line.size()));
}

BENCHMARK(BM_RecordToJsonLine)->Arg(16)->Arg(256)->Arg(2048);
BENCHMARK(BM_RecordFromJsonLine)->Arg(256);

}  // namespace
