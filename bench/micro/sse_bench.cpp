// File: bench/micro/sse_bench.cpp
// client::detail::StreamReader on whole streamed responses, with the template fast path on
// (/fast:1) and off (/fast:0, the simdjson On-Demand parse of every event): the client's CPU per
// SSE event once the bytes are read. Reported as ns_per_event.
//  - VllmCompletions: vLLM's /v1/completions chunks with continuous usage stats (~300 bytes),
//    256 token events then the usage event and [DONE].
//  - FloorServer: the exact events of bench/floor/floor_sse_server (as the bench_client.py
//    harness runs it: --stamp none, --model m), 256 of them then [DONE].
// Both with 16 events per feed() (the harness's "batched": one read brings many events) and
// with one event per feed() ("paced").
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "client/sse_stream.h"
#include "record/record.h"

namespace {

using servebench::client::detail::ParseScratch;
using servebench::client::detail::StreamReader;
using servebench::record::RequestRecord;

constexpr int kTokens = 256;

// Typical token texts (JSON string content), one with an escape.
const char* const kTokenTexts[] = {" The",  " model", " is",   " a",     " large", " language",
                                   ",",     " and",   " it",   " can",   " write", "\\n",
                                   " code", " that",  " runs", " fast.", " We",    " test"};

std::string vllm_completion_event(const std::string& text, int completion_tokens) {
  const int prompt_tokens = 1024;
  return R"({"id":"cmpl-3f2b9c8d7e6a45b1a0c9d8e7f6a5b4c3","object":"text_completion",)"
         R"("created":1717171717,"model":"m",)"
         R"("choices":[{"index":0,"text":")" +
         text + R"(","logprobs":null,"finish_reason":null,"stop_reason":null}],)" +
         R"("usage":{"prompt_tokens":)" + std::to_string(prompt_tokens) + R"(,"total_tokens":)" +
         std::to_string(prompt_tokens + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + R"(,"prompt_tokens_details":null}})";
}

// The body of one vLLM completions response, as "data: …\n\n" events.
std::vector<std::string> vllm_stream() {
  std::vector<std::string> events;
  for (int i = 1; i <= kTokens; ++i) {
    std::string event =
        vllm_completion_event(kTokenTexts[static_cast<size_t>(i) % std::size(kTokenTexts)], i);
    if (i == kTokens) {
      const std::string null_reason = R"("finish_reason":null)";
      event.replace(event.find(null_reason), null_reason.size(), R"("finish_reason":"length")");
    }
    events.push_back("data: " + event + "\n\n");
  }
  events.push_back(R"(data: {"id":"cmpl-3f2b9c8d7e6a45b1a0c9d8e7f6a5b4c3","object":)"
                   R"("text_completion","created":1717171717,"model":)"
                   R"("m","choices":[],"usage":)"
                   R"({"prompt_tokens":1024,"total_tokens":1280,"completion_tokens":256}})"
                   "\n\n");
  events.push_back("data: [DONE]\n\n");
  return events;
}

// floor_sse_server's build_chunk() with --stamp none: every event is the same.
std::vector<std::string> floor_stream() {
  const std::string event =
      R"(data: {"id":"cmpl-8a1c7f3e9b2d4c6a8a1c7f3e9b2d4c6a","object":"text_completion",)"
      R"("created":1717171717,"model":"m","choices":[{"index":0,"text":" t0000000000000000",)"
      R"("logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null})"
      "\n\n";
  std::vector<std::string> events(kTokens, event);
  events.push_back("data: [DONE]\n\n");
  return events;
}

// Reads the stream again and again, `per_feed` events per feed(); the record's buffers keep their
// capacity, as a long-lived connection's would after the first requests.
void read_stream(benchmark::State& state, const std::vector<std::string>& events) {
  const bool fast = state.range(0) != 0;
  const size_t per_feed = static_cast<size_t>(state.range(1));
  std::vector<std::string> feeds;
  size_t event_bytes = 0;
  for (size_t first = 0; first < events.size(); first += per_feed) {
    std::string feed;
    for (size_t i = first; i < events.size() && i < first + per_feed; ++i) feed += events[i];
    event_bytes += feed.size();
    feeds.push_back(std::move(feed));
  }
  ParseScratch scratch;
  StreamReader reader(&scratch);
  reader.set_template_enabled(fast);
  RequestRecord record;
  uint64_t hits = 0;
  for (auto _ : state) {
    record.chunk_ns.clear();
    record.chunk_tokens.clear();
    record.generated_text.clear();
    record.first_token_ns = record.last_token_ns = -1;
    record.success = false;
    reader.begin(&record);
    int64_t now_ns = 0;
    for (const std::string& feed : feeds) reader.feed(feed.data(), feed.size(), now_ns += 1000);
    reader.finish(now_ns);
    hits = reader.template_hits();
    if (!record.success) state.SkipWithError("the stream did not read as a success");
    benchmark::DoNotOptimize(record.generated_text.data());
  }
  const double n = static_cast<double>(events.size());
  state.counters["ns_per_event"] = benchmark::Counter(
      n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["event_bytes"] = static_cast<double>(event_bytes) / n;
  state.counters["fast_hits"] = static_cast<double>(hits);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events.size()));
}

void BM_SseVllmCompletions(benchmark::State& state) {
  static const std::vector<std::string> events = vllm_stream();
  read_stream(state, events);
}

void BM_SseFloorServer(benchmark::State& state) {
  static const std::vector<std::string> events = floor_stream();
  read_stream(state, events);
}

BENCHMARK(BM_SseVllmCompletions)->ArgNames({"fast", "per_feed"})->ArgsProduct({{1, 0}, {16, 1}});
BENCHMARK(BM_SseFloorServer)->ArgNames({"fast", "per_feed"})->ArgsProduct({{1, 0}, {16, 1}});

}  // namespace
