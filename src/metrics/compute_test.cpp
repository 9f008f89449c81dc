// metrics::compute on small constructed runs; every expectation is worked out by hand from
// vLLM's calculate_metrics (vllm/benchmarks/serve.py) and written next to the assertion.
#include <gtest/gtest.h>

#include <cmath>

#include "metrics/metrics.h"

namespace servebench::metrics {
namespace {

using record::RequestRecord;

constexpr int64_t kMs = 1'000'000;

// A completed streaming request: sent at `sent_ms`, content events at `chunks_ms`.
RequestRecord ok(uint64_t index, int64_t sent_ms, std::vector<int64_t> chunks_ms,
                 int32_t completion_tokens, int32_t prompt_tokens) {
  RequestRecord r;
  r.index = index;
  r.intended_ns = sent_ms * kMs;
  r.sent_ns = sent_ms * kMs;
  for (int64_t c : chunks_ms) r.chunk_ns.push_back(c * kMs);
  r.first_token_ns = r.chunk_ns.front();
  r.last_token_ns = r.chunk_ns.back();
  r.done_ns = r.last_token_ns + kMs;
  r.server_completion_tokens = completion_tokens;
  r.prompt_tokens = prompt_tokens;
  r.http_status = 200;
  r.success = true;
  return r;
}

RequestRecord failed(uint64_t index, int64_t sent_ms, int status, std::string error) {
  RequestRecord r;
  r.index = index;
  r.intended_ns = sent_ms * kMs;
  r.sent_ns = sent_ms * kMs;
  r.http_status = status;
  r.error = std::move(error);
  r.prompt_tokens = 7;
  return r;
}

// A: ttft 100, e2el 150, tpot 25, itl 20 30.   B: ttft 200, e2el 240, tpot 10, itl 10 x4.
// C: one token: ttft 300, e2el 300, no tpot (0 for goodput), no itl.
// D: failed (503).   E: warmup, ignored.
std::vector<RequestRecord> small_run() {
  std::vector<RequestRecord> rs;
  rs.push_back(ok(0, 0, {100, 120, 150}, 3, 10));
  rs.push_back(ok(1, 50, {250, 260, 270, 280, 290}, 5, 20));
  rs.push_back(ok(2, 100, {400}, 1, 5));
  rs.push_back(failed(3, 10, 503, "Service Unavailable"));
  RequestRecord warm = ok(4, 0, {1, 2}, 2, 1000);
  warm.warmup = true;
  rs.push_back(warm);
  return rs;
}

TEST(Compute, CountsTokensAndThroughputLikeVllm) {
  auto rs = small_run();
  Summary s = compute(rs, 2.0, {});
  const VllmMetrics& v = s.vllm;
  EXPECT_EQ(v.completed, 3u);
  EXPECT_EQ(v.failed, 1u);
  EXPECT_EQ(v.total_input, 35);  // failed and warmup prompts excluded
  EXPECT_EQ(v.total_output, 9);
  EXPECT_DOUBLE_EQ(v.duration_s, 2.0);
  EXPECT_DOUBLE_EQ(v.request_throughput, 1.5);
  EXPECT_DOUBLE_EQ(v.output_throughput, 4.5);
  EXPECT_DOUBLE_EQ(v.total_token_throughput, 22.0);
  EXPECT_EQ(v.request_goodput, -1.0);  // no --goodput
  EXPECT_EQ(s.extras.warmup_ignored, 1u);
  EXPECT_EQ(s.extras.failures_by_reason, (std::map<std::string, size_t>{{"http_503", 1}}));
}

TEST(Compute, UnfinishedRequestsSplitIntoIncompleteAndErroredWithTheirTokens) {
  std::vector<RequestRecord> rs;
  rs.push_back(ok(0, 0, {100, 120}, 2, 10));
  // Cut off at the end of --duration after 3 tokens (usage per chunk): GuideLLM's incomplete.
  RequestRecord cut = failed(1, 0, 200, "cancelled: still running when the run's duration ended");
  cut.server_completion_tokens = 3;
  rs.push_back(cut);
  rs.push_back(failed(2, 0, 503, "Service Unavailable"));  // nothing received
  // Reset after 2 tokens the client counted itself (no usage).
  RequestRecord reset = failed(3, 0, 200, "connection reset by peer");
  reset.client_output_tokens = 2;
  rs.push_back(reset);
  const Extras x = compute(rs, 1.0, {}).extras;
  EXPECT_EQ(x.incomplete.requests, 1u);
  EXPECT_EQ(x.incomplete.input_tokens, 7);
  EXPECT_EQ(x.incomplete.output_tokens, 3);
  EXPECT_EQ(x.errored.requests, 2u);
  EXPECT_EQ(x.errored.input_tokens, 14);
  EXPECT_EQ(x.errored.output_tokens, 2);  // the 503 adds none, not vLLM's fallback of 1
}

TEST(Compute, LatencyDistributionsExcludeFailuresAndOneTokenTpot) {
  auto rs = small_run();
  Summary s = compute(rs, 2.0, {});
  const VllmMetrics& v = s.vllm;
  // TTFT {100, 200, 300}
  EXPECT_EQ(v.ttft_ms.count, 3u);
  EXPECT_DOUBLE_EQ(v.ttft_ms.mean, 200);
  EXPECT_DOUBLE_EQ(v.ttft_ms.median, 200);
  EXPECT_NEAR(v.ttft_ms.std, std::sqrt(20000.0 / 3.0), 1e-9);
  ASSERT_EQ(v.ttft_ms.percentiles.size(), 1u);
  EXPECT_NEAR(v.ttft_ms.percentiles[0].second, 298, 1e-9);  // index 1.98
  // TPOT {25, 10}: the one-token request C is left out.
  EXPECT_EQ(v.tpot_ms.count, 2u);
  EXPECT_DOUBLE_EQ(v.tpot_ms.mean, 17.5);
  EXPECT_DOUBLE_EQ(v.tpot_ms.std, 7.5);
  EXPECT_NEAR(v.tpot_ms.percentiles[0].second, 24.85, 1e-9);  // index 0.99
  // ITL pooled over requests: {20, 30, 10, 10, 10, 10}
  EXPECT_EQ(v.itl_ms.count, 6u);
  EXPECT_DOUBLE_EQ(v.itl_ms.mean, 15);
  EXPECT_DOUBLE_EQ(v.itl_ms.median, 10);
  EXPECT_NEAR(v.itl_ms.std, std::sqrt(350.0 / 6.0), 1e-9);
  EXPECT_NEAR(v.itl_ms.percentiles[0].second, 29.5, 1e-9);  // index 4.95
  EXPECT_DOUBLE_EQ(v.itl_ms.min, 10);
  EXPECT_DOUBLE_EQ(v.itl_ms.max, 30);
  // E2EL {150, 240, 300}
  EXPECT_DOUBLE_EQ(v.e2el_ms.mean, 230);
  EXPECT_DOUBLE_EQ(v.e2el_ms.median, 240);
  // Peaks: all 9 chunk events in the first second; A, B, C overlap at t = 100 ms.
  EXPECT_EQ(v.max_output_tokens_per_s, 9);
  EXPECT_EQ(v.max_concurrent_requests, 3);
}

TEST(Compute, SeveralPercentilesKeepTheirOrder) {
  auto rs = small_run();
  Options o;
  o.percentiles = {0, 50, 99.9, 100};
  Summary s = compute(rs, 2.0, o);
  const auto& p = s.vllm.e2el_ms.percentiles;  // {150, 240, 300}
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0], (std::pair<double, double>{0, 150}));
  EXPECT_EQ(p[1], (std::pair<double, double>{50, 240}));
  EXPECT_EQ(p[2].first, 99.9);
  EXPECT_NEAR(p[2].second, 299.88, 1e-9);  // index 1.998
  EXPECT_EQ(p[3], (std::pair<double, double>{100, 300}));
}

double goodput(const std::map<std::string, double>& slo) {
  auto rs = small_run();
  Options o;
  o.goodput_slo_ms = slo;
  return compute(rs, 2.0, o).vllm.request_goodput;
}

TEST(Compute, GoodputWithEachSlo) {
  // TTFT 100/200/300: an SLO equal to the value passes (vLLM: slo >= value).
  EXPECT_DOUBLE_EQ(goodput({{"ttft", 200}}), 1.0);  // A, B
  EXPECT_DOUBLE_EQ(goodput({{"ttft", 99}}), 0.0);
  // TPOT 25/10/0 (C has one token: 0 for goodput).
  EXPECT_DOUBLE_EQ(goodput({{"tpot", 20}}), 1.0);  // B, C
  EXPECT_DOUBLE_EQ(goodput({{"tpot", 0}}), 0.5);   // C only
  // E2EL 150/240/300.
  EXPECT_DOUBLE_EQ(goodput({{"e2el", 200}}), 0.5);  // A
  EXPECT_DOUBLE_EQ(goodput({{"e2el", 300}}), 1.5);
  // All given SLOs must hold: A fails tpot, C fails ttft.
  EXPECT_DOUBLE_EQ(goodput({{"ttft", 250}, {"tpot", 20}}), 0.5);
  EXPECT_DOUBLE_EQ(goodput({{"ttft", 1000}, {"tpot", 1000}, {"e2el", 1000}}), 1.5);
}

TEST(Compute, ZeroCompletedGivesZerosWithoutCrashing) {
  std::vector<RequestRecord> rs = {failed(0, 0, 500, "Internal Server Error"),
                                   failed(1, 5, 0, "Couldn't connect to server")};
  Options o;
  o.percentiles = {50, 99};
  o.goodput_slo_ms = {{"ttft", 100}};
  Summary s = compute(rs, 1.0, o);
  const VllmMetrics& v = s.vllm;
  EXPECT_EQ(v.completed, 0u);
  EXPECT_EQ(v.failed, 2u);
  EXPECT_EQ(v.total_input, 0);
  EXPECT_EQ(v.total_output, 0);
  EXPECT_EQ(v.request_throughput, 0);
  EXPECT_EQ(v.request_goodput, 0);
  EXPECT_EQ(v.ttft_ms.mean, 0);
  EXPECT_EQ(v.itl_ms.percentiles.size(), 2u);
  EXPECT_EQ(v.itl_ms.percentiles[1].second, 0);
  EXPECT_EQ(v.max_output_tokens_per_s, 0);
  EXPECT_EQ(v.max_concurrent_requests, 0);
  EXPECT_EQ(s.extras.failures_by_reason,
            (std::map<std::string, size_t>{{"connection", 1}, {"http_500", 1}}));
  // No records at all, and a zero duration: still no crash, still zeros.
  Summary empty = compute({}, 0.0, o);
  EXPECT_EQ(empty.vllm.completed, 0u);
  EXPECT_EQ(empty.vllm.request_throughput, 0);
  EXPECT_EQ(empty.extras.achieved_rate, 0);
}

TEST(Compute, ChatRoleChunkCountsForTtft) {
  // Chat: the first event carries only the role (empty text) and still ends TTFT, as in vLLM.
  RequestRecord r = ok(0, 0, {100, 130, 160}, 2, 4);
  r.chunk_tokens = {0, 1, 1};
  std::vector<RequestRecord> rs = {r};
  Summary s = compute(rs, 1.0, {});
  EXPECT_DOUBLE_EQ(s.vllm.ttft_ms.mean, 100);
  EXPECT_EQ(s.vllm.itl_ms.count, 2u);  // 30, 30
  EXPECT_DOUBLE_EQ(s.vllm.itl_ms.mean, 30);
  EXPECT_DOUBLE_EQ(s.vllm.tpot_ms.mean, 60);  // (160 - 100) / (2 - 1)
  // Per token: the role chunk is part of TTFT, so one gap of 30 ms for the second token.
  EXPECT_EQ(s.extras.itl_per_token_requests, 1u);
  EXPECT_EQ(s.extras.itl_per_token_ms.count, 1u);
  EXPECT_DOUBLE_EQ(s.extras.itl_per_token_ms.mean, 30);
}

TEST(Compute, PerTokenItlSpreadsChunkGapsOverTheirTokens) {
  // Gaps 10, 30, 10, 40 ms; tokens per event 1, 1, 3, 0 (an empty event), 2.
  RequestRecord r = ok(0, 0, {100, 110, 140, 150, 190}, 7, 4);
  r.chunk_tokens = {1, 1, 3, 0, 2};
  RequestRecord no_usage = ok(1, 0, {100, 200}, 2, 4);  // chunk_tokens unknown: left out
  std::vector<RequestRecord> rs = {r, no_usage};
  Summary s = compute(rs, 1.0, {});
  // 10 (1 token), 30/3 x3, (10 + 40)/2 x2: six samples = 7 tokens - the first.
  const Distribution& d = s.extras.itl_per_token_ms;
  EXPECT_EQ(s.extras.itl_per_token_requests, 1u);
  EXPECT_EQ(d.count, 6u);
  EXPECT_DOUBLE_EQ(d.mean, 15);
  EXPECT_DOUBLE_EQ(d.median, 10);
  EXPECT_DOUBLE_EQ(d.max, 25);
  // vLLM's ITL stays per event, empty event included: 10 30 10 40 and 100.
  EXPECT_EQ(s.vllm.itl_ms.count, 5u);
  EXPECT_DOUBLE_EQ(s.vllm.itl_ms.mean, 38);
}

TEST(Compute, LatencyFromIntendedSendTimeShowsQueueing) {
  // Intended at 0, held back until 500 ms (concurrency cap), first token 600, last 700.
  RequestRecord r = ok(0, 500, {600, 650, 700}, 3, 4);
  r.intended_ns = 0;
  std::vector<RequestRecord> rs = {r};
  Summary s = compute(rs, 1.0, {});
  EXPECT_DOUBLE_EQ(s.vllm.ttft_ms.mean, 100);
  EXPECT_DOUBLE_EQ(s.vllm.e2el_ms.mean, 200);
  EXPECT_DOUBLE_EQ(s.extras.ttft_from_intended_ms.mean, 600);
  EXPECT_DOUBLE_EQ(s.extras.e2el_from_intended_ms.mean, 700);
  EXPECT_DOUBLE_EQ(s.extras.schedule_lag_ms.mean, 500);
  EXPECT_DOUBLE_EQ(s.vllm.client_queue_time_ms.mean, 500);
  EXPECT_DOUBLE_EQ(s.vllm.e2el_including_client_queue_ms.mean, 700);
}

TEST(Compute, AchievedAgainstScheduledRate) {
  std::vector<RequestRecord> rs;
  for (int i = 0; i < 4; ++i) {
    RequestRecord r = ok(i, 250 * (i + 1), {250 * (i + 1) + 10}, 1, 1);
    rs.push_back(r);
  }
  rs[3].sent_ns = 1250 * kMs;  // the last one sent 250 ms late
  rs[3].first_token_ns = rs[3].last_token_ns = rs[3].chunk_ns[0] = 1260 * kMs;
  Options o;
  o.requested_rate = 4;
  Summary s = compute(rs, 1.5, o);
  EXPECT_EQ(s.extras.requests_sent, 4u);
  EXPECT_DOUBLE_EQ(s.extras.requested_rate, 4);
  EXPECT_DOUBLE_EQ(s.extras.scheduled_rate, 4.0);  // 4 / 1.0 s
  EXPECT_DOUBLE_EQ(s.extras.achieved_rate, 3.2);   // 4 / 1.25 s
  EXPECT_EQ(s.extras.schedule_lag_ms.count, 4u);
  EXPECT_DOUBLE_EQ(s.extras.schedule_lag_ms.max, 250);
}

TEST(Compute, PeakTokensPerSecondAndConcurrencyOnATimeline) {
  // 1-second buckets from the earliest start (0):
  //   R1 events 0.5 0.9 | 1.1 1.2          -> bucket 0: 2, bucket 1: 2
  //   R2 events 1.0 1.5 1.9 | 2.5          -> bucket 1: 3, bucket 2: 1
  //   R3 events 1.3 | 2.1                  -> bucket 1: 1, bucket 2: 1
  // Bucket 1 holds 6. Active: R1 [0, 1.2), R2 [0.8, 2.5), R3 [1.05, 2.1): 3 at 1.05 s.
  std::vector<RequestRecord> rs = {ok(0, 0, {500, 900, 1100, 1200}, 4, 1),
                                   ok(1, 800, {1000, 1500, 1900, 2500}, 4, 1),
                                   ok(2, 1050, {1300, 2100}, 2, 1)};
  Summary s = compute(rs, 2.5, {});
  EXPECT_EQ(s.vllm.max_output_tokens_per_s, 6);
  EXPECT_EQ(s.vllm.max_concurrent_requests, 3);
}

TEST(Compute, PeakConcurrencyTreatsIntervalsAsHalfOpen) {
  // The second request starts exactly when the first one ends: never two at once.
  std::vector<RequestRecord> rs = {ok(0, 0, {50, 100}, 2, 1), ok(1, 100, {150, 200}, 2, 1)};
  Summary s = compute(rs, 0.2, {});
  EXPECT_EQ(s.vllm.max_concurrent_requests, 1);
  EXPECT_EQ(s.vllm.max_output_tokens_per_s, 4);
}

TEST(VllmOutputTokens, ZeroUsageFallsBackLikeVllm) {
  RequestRecord r;
  r.server_completion_tokens = 0;
  r.client_output_tokens = 4;
  EXPECT_EQ(vllm_output_tokens(r), 4);
  r.client_output_tokens = -1;
  EXPECT_EQ(vllm_output_tokens(r), 1);
  r.server_completion_tokens = 9;
  EXPECT_EQ(vllm_output_tokens(r), 9);
}

TEST(Compute, UsageCountsPast32BitsAreSummedWhole) {
  // Two requests with 2^32+7 tokens each way: the sums are 2 x 4294967303, not 2 x 7.
  std::vector<RequestRecord> rs = {ok(0, 0, {100, 120}, 2, 10), ok(1, 0, {100, 130}, 2, 10)};
  for (RequestRecord& r : rs) {
    r.server_prompt_tokens = (int64_t{1} << 32) + 7;
    r.server_completion_tokens = (int64_t{1} << 32) + 7;
  }
  const Summary s = compute(rs, 1.0, {});
  EXPECT_EQ(s.vllm.total_input, 8589934606);
  EXPECT_EQ(s.vllm.total_output, 8589934606);
  EXPECT_EQ(vllm_output_tokens(rs[0]), 4294967303);
}

TEST(ClassifyFailure, StableReasons) {
  RequestRecord r;
  EXPECT_EQ(classify_failure(r), "not_sent");
  r.sent_ns = 0;
  r.http_status = 429;
  EXPECT_EQ(classify_failure(r), "http_429");
  r.http_status = 0;
  r.error = "HTTP 502: Bad Gateway";  // no status recorded: read from the text
  EXPECT_EQ(classify_failure(r), "http_502");
  r.error = "upstream said HTTP/1.1 504 after 60 s";
  EXPECT_EQ(classify_failure(r), "http_504");
  r.error = "Timeout was reached";
  EXPECT_EQ(classify_failure(r), "timeout");
  r.error = "Failed to connect to 127.0.0.1 port 9: Connection refused";
  EXPECT_EQ(classify_failure(r), "connection");
  r.http_status = 200;
  r.error = "bad SSE event: JSON parse error at byte 3";
  EXPECT_EQ(classify_failure(r), "malformed");
  r.error =
      "transport: Failure when receiving data from the peer: Illegal or missing "
      "hexadecimal sequence in chunked-encoding";
  EXPECT_EQ(classify_failure(r), "malformed");  // as ours says "bad byte in a chunk size"
  r.error = "Never received a valid chunk to calculate TTFT.";
  EXPECT_EQ(classify_failure(r), "no_tokens");
  r.first_token_ns = 10;
  r.error = "response ended before [DONE]";
  EXPECT_EQ(classify_failure(r), "stream_error");
  r.error = "stopped by SIGINT: cancelled after drain timeout";
  EXPECT_EQ(classify_failure(r), "cancelled");
  // success without consistent token times is counted as failed, not trusted
  RequestRecord bad = ok(0, 10, {5}, 1, 1);
  EXPECT_EQ(classify_failure(bad), "malformed");
  EXPECT_EQ(classify_failure(ok(0, 0, {5}, 1, 1)), "");
}

}  // namespace
}  // namespace servebench::metrics
