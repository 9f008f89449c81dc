// The console blocks. The golden text below was produced by running vLLM's own print statements
// (benchmark() in vllm/benchmarks/serve.py) under Python with the same numbers, trailing spaces
// and all; the seed test checks the layout against a block users pasted from vLLM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "report/report.h"
#include "report/test_support.h"
#include "server_metrics/server_metrics.h"

namespace servebench::report {
namespace {

metrics::Distribution dist(double mean, double median, std::vector<double> p_values) {
  metrics::Distribution d;
  d.mean = mean;
  d.median = median;
  d.percentiles = {{50.0, p_values[0]}, {99.9, p_values[1]}};
  return d;
}

metrics::Summary constructed_summary() {
  metrics::Summary s;
  metrics::VllmMetrics& m = s.vllm;
  m.completed = 180;
  m.failed = 20;
  m.duration_s = 20.123456;
  m.total_input = 184320;
  m.total_output = 23040;
  m.request_throughput = 8.9448;
  m.request_goodput = 7.5;
  m.output_throughput = 1144.93;
  m.max_output_tokens_per_s = 1543.0;
  m.max_concurrent_requests = 32;
  m.total_token_throughput = 10304.5678;
  m.ttft_ms = dist(42.755, 36.79, {36.79, 177.123});  // 42.755 is just above in binary: 42.76
  m.tpot_ms = dist(8.954, 8.99, {8.99, 11.255});
  m.itl_ms = dist(9.0, 6.3, {6.3, 38.725});
  m.e2el_ms = dist(1234.5, 1200.0, {1200.0, 2222.2219});
  m.client_queue_time_ms = dist(5.5, 4.4, {4.4, 10.0});
  m.e2el_including_client_queue_ms = dist(1240.0, 1204.4, {1204.4, 2230.0});
  return s;
}

RunInfo full_info() {
  RunInfo info;
  info.max_concurrency = 32;
  info.request_rate = 10.0;
  info.goodput_slo_ms = {{"ttft", 100}};
  info.percentile_metrics = {
      "ttft", "tpot", "itl", "e2el", "client_queue_time", "e2el_including_client_queue"};
  return info;
}

TEST(VllmConsoleBlock, MatchesVllmPrintStatementsByteForByte) {
  const std::string expected =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     180       \n"
      "Failed requests:                         20        \n"
      "Maximum request concurrency:             32        \n"
      "Request rate configured (RPS):           10.00     \n"
      "Benchmark duration (s):                  20.12     \n"
      "Total input tokens:                      184320    \n"
      "Total generated tokens:                  23040     \n"
      "Request throughput (req/s):              8.94      \n"
      "Request goodput (req/s):                 7.50      \n"
      "Output token throughput (tok/s):         1144.93   \n"
      "Peak output token throughput (tok/s):    1543.00   \n"
      "Peak concurrent requests:                32.00     \n"
      "Total token throughput (tok/s):          10304.57  \n"
      "---------------Time to First Token----------------\n"
      "Mean TTFT (ms):                          42.76     \n"
      "Median TTFT (ms):                        36.79     \n"
      "P50 TTFT (ms):                           36.79     \n"
      "P99.9 TTFT (ms):                         177.12    \n"
      "-----Time per Output Token (excl. 1st token)------\n"
      "Mean TPOT (ms):                          8.95      \n"
      "Median TPOT (ms):                        8.99      \n"
      "P50 TPOT (ms):                           8.99      \n"
      "P99.9 TPOT (ms):                         11.26     \n"
      "---------------Inter-token Latency----------------\n"
      "Mean ITL (ms):                           9.00      \n"
      "Median ITL (ms):                         6.30      \n"
      "P50 ITL (ms):                            6.30      \n"
      "P99.9 ITL (ms):                          38.73     \n"
      "----------------End-to-end Latency----------------\n"
      "Mean E2EL (ms):                          1234.50   \n"
      "Median E2EL (ms):                        1200.00   \n"
      "P50 E2EL (ms):                           1200.00   \n"
      "P99.9 E2EL (ms):                         2222.22   \n"
      "---------------Client-side Queueing---------------\n"
      "Mean Client Queue Time (ms):             5.50      \n"
      "Median Client Queue Time (ms):           4.40      \n"
      "P50 Client Queue Time (ms):              4.40      \n"
      "P99.9 Client Queue Time (ms):            10.00     \n"
      "--------Queue-inclusive End-to-end Latency--------\n"
      "Mean E2EL incl. Client Queue (ms):       1240.00   \n"
      "Median E2EL incl. Client Queue (ms):     1204.40   \n"
      "P50 E2EL incl. Client Queue (ms):        1204.40   \n"
      "P99.9 E2EL incl. Client Queue (ms):      2230.00   \n"
      "==================================================\n";
  EXPECT_EQ(vllm_console_block(constructed_summary(), full_info()), expected);
}

TEST(VllmConsoleBlock, OptionalLinesFollowVllmConditions) {
  // vLLM's defaults: rate inf, no --max-concurrency, no --goodput, ttft,tpot,itl.
  RunInfo info;
  info.request_rate = INFINITY;
  const std::string block = vllm_console_block(constructed_summary(), info);
  EXPECT_EQ(block.find("Maximum request concurrency"), std::string::npos);
  EXPECT_EQ(block.find("Request rate configured"), std::string::npos);
  EXPECT_EQ(block.find("Request goodput"), std::string::npos);
  EXPECT_EQ(block.find("End-to-end Latency"), std::string::npos);
  EXPECT_EQ(block.find("Client-side Queueing"), std::string::npos);
  EXPECT_NE(block.find("Mean ITL (ms):"), std::string::npos);
  // Queue sections need --max-concurrency even when selected; queue-inclusive E2EL also a rate.
  info.percentile_metrics = {"client_queue_time", "e2el_including_client_queue"};
  EXPECT_EQ(vllm_console_block(constructed_summary(), info).find("Client-side Queueing"),
            std::string::npos);
  info.max_concurrency = 4;
  const std::string capped = vllm_console_block(constructed_summary(), info);
  EXPECT_NE(capped.find("Client-side Queueing"), std::string::npos);
  EXPECT_EQ(capped.find("Queue-inclusive"), std::string::npos);
  // Without a tokenizer vLLM prints no token lines and no ttft/tpot/itl sections.
  RunInfo no_tok;
  no_tok.has_tokenizer = false;
  no_tok.percentile_metrics = {"ttft", "e2el"};
  const std::string bare = vllm_console_block(constructed_summary(), no_tok);
  EXPECT_EQ(bare.find("Total generated tokens"), std::string::npos);
  EXPECT_EQ(bare.find("Output token throughput"), std::string::npos);
  EXPECT_EQ(bare.find("Total token throughput"), std::string::npos);
  EXPECT_EQ(bare.find("TTFT"), std::string::npos);
  EXPECT_NE(bare.find("Mean E2EL (ms):"), std::string::npos);
  EXPECT_NE(bare.find("Peak concurrent requests:"), std::string::npos);
}

// vLLM's "Speculative Decoding" section, last in its block (golden text from vLLM's print
// statements run under Python with these numbers).
TEST(VllmConsoleBlock, SpeculativeDecodingSectionWhenTheServerHasIt) {
  RunInfo info;
  EXPECT_EQ(vllm_console_block(constructed_summary(), info).find("Speculative"), std::string::npos);
  info.spec_decode = test_support::example_spec_decode();
  const std::string block = vllm_console_block(constructed_summary(), info);
  const std::string expected =
      "---------------Speculative Decoding---------------\n"
      "Acceptance rate (%):                     62.50     \n"
      "Acceptance length:                       2.88      \n"
      "Drafts:                                  40        \n"
      "Draft tokens:                            120       \n"
      "Accepted tokens:                         75        \n"
      "Per-position acceptance (%):\n"
      "  Position 0:                            90.00     \n"
      "  Position 1:                            62.50     \n"
      "  Position 2:                            35.00     \n"
      "==================================================\n";
  ASSERT_GE(block.size(), expected.size());
  EXPECT_EQ(block.substr(block.size() - expected.size()), expected);
}

// vLLM's "Probe Requests" section, right after the throughput lines (golden text from vLLM's
// print statements run under Python).
TEST(VllmConsoleBlock, ProbeSectionAfterTheThroughputLines) {
  RunInfo info;
  ProbeStats probes;
  probes.completed = 12;
  probes.failed = 1;
  probes.median_e2el_ms = 50.125;
  probes.p99_e2el_ms = 61.5;
  probes.max_e2el_ms = 62.0;
  info.probes = probes;
  const std::string block = vllm_console_block(constructed_summary(), info);
  const std::string expected =
      "Total token throughput (tok/s):          10304.57  \n"
      "------------------Probe Requests------------------\n"
      "Probe requests completed:                12        \n"
      "Probe requests failed:                   1         \n"
      "Median probe E2EL (ms):                  50.12     \n"
      "P99 probe E2EL (ms):                     61.50     \n"
      "Max probe E2EL (ms):                     62.00     \n"
      "---------------Time to First Token----------------\n";
  EXPECT_NE(block.find(expected), std::string::npos) << block;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line.erase(line.find_last_not_of(' ') + 1);
    out.push_back(line);
  }
  return out;
}

TEST(VllmConsoleBlock, LaysOutTheSeedBlockTheWayVllmPrintedIt) {
  // From /work/shared/seeds/001_*.txt ("Single Server"); the paste lost trailing spaces.
  const std::string seed =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     200\n"
      "Benchmark duration (s):                  11.38\n"
      "Total input tokens:                      200000\n"
      "Total generated tokens:                  20000\n"
      "Request throughput (req/s):              17.58\n"
      "Output token throughput (tok/s):         1757.76\n"
      "Total Token throughput (tok/s):          19335.39\n"
      "---------------Time to First Token----------------\n"
      "Mean TTFT (ms):                          42.76\n"
      "Median TTFT (ms):                        36.79\n"
      "P99 TTFT (ms):                           77.19\n"
      "-----Time per Output Token (excl. 1st token)------\n"
      "Mean TPOT (ms):                          8.95\n"
      "Median TPOT (ms):                        8.99\n"
      "P99 TPOT (ms):                           11.25\n"
      "---------------Inter-token Latency----------------\n"
      "Mean ITL (ms):                           9.00\n"
      "Median ITL (ms):                         6.30\n"
      "P99 ITL (ms):                            38.73\n"
      "==================================================\n";
  metrics::Summary s;
  s.vllm.completed = 200;
  s.vllm.duration_s = 11.38;
  s.vllm.total_input = 200000;
  s.vllm.total_output = 20000;
  s.vllm.request_throughput = 17.58;
  s.vllm.output_throughput = 1757.76;
  s.vllm.total_token_throughput = 19335.39;
  s.vllm.ttft_ms = {.mean = 42.76, .median = 36.79, .percentiles = {{99, 77.19}}};
  s.vllm.tpot_ms = {.mean = 8.95, .median = 8.99, .percentiles = {{99, 11.25}}};
  s.vllm.itl_ms = {.mean = 9.0, .median = 6.3, .percentiles = {{99, 38.73}}};
  RunInfo info;  // rate inf, no concurrency cap, default percentile metrics
  info.request_rate = INFINITY;
  const auto ours = lines_of(vllm_console_block(s, info));
  // Every seed line appears, in order; the current vLLM adds lines (failed requests, peaks)
  // and prints "Total token throughput" (lower case) after the peak lines.
  size_t at = 0;
  for (const std::string& line : lines_of(seed)) {
    if (line.rfind("Total Token throughput", 0) == 0) {
      EXPECT_NE(
          std::find(ours.begin(), ours.end(), "Total token throughput (tok/s):          19335.39"),
          ours.end());
      continue;
    }
    auto it = std::find(ours.begin() + static_cast<std::ptrdiff_t>(at), ours.end(), line);
    ASSERT_NE(it, ours.end()) << "missing or out of order: " << line;
    at = static_cast<size_t>(it - ours.begin()) + 1;
  }
  // The label column is 40 wide plus one space: every value starts at column 41; headers are
  // exactly 50 wide.
  for (const std::string& line : lines_of(vllm_console_block(constructed_summary(), full_info()))) {
    if (line.find(':') != std::string::npos) {
      ASSERT_GT(line.size(), 41u) << line;
      EXPECT_EQ(line[40], ' ') << line;
      EXPECT_NE(line[41], ' ') << line;
    } else {
      EXPECT_EQ(line.size(), 50u) << line;
    }
  }
}

TEST(ExtrasConsoleBlock, LabelledAndComplete) {
  metrics::Summary s = constructed_summary();
  s.extras.requests_sent = 200;
  s.extras.requested_rate = 10;
  s.extras.scheduled_rate = 10;
  s.extras.achieved_rate = 9.87;
  s.extras.schedule_lag_ms = {.mean = 0.05, .median = 0.04, .max = 1.5, .percentiles = {{99, 0.9}}};
  s.extras.failures_by_reason = {{"http_503", 15}, {"timeout", 5}};
  const std::string block = extras_console_block(s);
  const auto lines = lines_of(block);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "======== servebench extras (not in vLLM) =========");
  EXPECT_EQ(lines.back(), std::string(50, '='));
  auto has = [&](const std::string& l) {
    return std::find(lines.begin(), lines.end(), l) != lines.end();
  };
  EXPECT_TRUE(has("Requests sent:                           200"));
  EXPECT_TRUE(has("Request rate achieved (RPS):             9.87"));
  EXPECT_TRUE(has("P99 schedule lag (ms):                   0.90"));
  EXPECT_TRUE(has("Max schedule lag (ms):                   1.50"));
  EXPECT_TRUE(has("http_503:                                15"));
  EXPECT_TRUE(has("timeout:                                 5"));
  EXPECT_TRUE(has("n/a: the server sent no per-chunk usage"));
  EXPECT_EQ(block.find("Client health"), std::string::npos);

  RunInfo info;
  info.client_health = ClientHealth{.cpu_user_s = 1.5,
                                    .cpu_system_s = 0.5,
                                    .max_loop_lag_ns = 2'500'000,
                                    .bytes_received = 123456,
                                    .sse_events = 20000,
                                    .connections_opened = 32,
                                    .t0_mono_ns = 0,
                                    .transport = "http1",
                                    .arrival_clock = "kernel",
                                    .kernel_stamped_reads = 900,
                                    .reads_stamped_at_read = 0,
                                    .read_delay_p50_ns = 20'000,
                                    .read_delay_p99_ns = 1'250'000,
                                    .read_delay_p999_ns = 2'000'000,
                                    .read_delay_max_ns = 3'000'000};
  s.extras.itl_per_token_requests = 3;
  const auto with_health = lines_of(extras_console_block(s, info));
  auto has2 = [&](const std::string& l) {
    return std::find(with_health.begin(), with_health.end(), l) != with_health.end();
  };
  EXPECT_TRUE(has2("Client CPU busy (% of one core):         9.94"));  // 2 s / 20.123456 s
  EXPECT_TRUE(has2("Max event-loop lag (ms):                 2.50"));
  EXPECT_TRUE(has2("Connections opened:                      32"));
  EXPECT_TRUE(has2("Requests with tokens per chunk:          3"));
  EXPECT_TRUE(has2("Chunk times from:                        kernel receive stamps"));
  EXPECT_TRUE(has2("Read delay P99 (ms):                     1.25"));
  EXPECT_TRUE(has2("Read delay max (ms):                     3.00"));

  info.client_health->arrival_clock = "mixed";
  info.client_health->reads_stamped_at_read = 100;
  const std::string mixed = extras_console_block(s, info);
  EXPECT_NE(mixed.find("mixed (900 of 1000 reads kernel-stamped)"), std::string::npos);
  info.client_health->arrival_clock = "read";
  info.client_health->kernel_stamped_reads = 0;
  const std::string read_only = extras_console_block(s, info);
  EXPECT_NE(read_only.find("client reads"), std::string::npos);
  EXPECT_EQ(read_only.find("Read delay"), std::string::npos);
}

}  // namespace
}  // namespace servebench::report

namespace servebench::report {
namespace {

TEST(ServerMetricsConsoleBlock, KnownMetricsOnePerLineSeriesNamedWhenSeveral) {
  const nlohmann::json summary = nlohmann::json::parse(R"({
    "interval_s": 0.333,
    "endpoints": [{
      "url": "http://decode:8000/metrics", "scrapes": 31, "failures": 1,
      "first_error": "GET http://decode:8000/metrics: HTTP 503",
      "metrics": {
        "vllm:num_requests_running": {"type": "gauge", "series": [
          {"labels": {"engine": "0", "model_name": "m"}, "mean": 12.345, "max": 16},
          {"labels": {"engine": "1", "model_name": "m"}, "mean": 3, "max": 4}]},
        "vllm:generation_tokens_total": {"type": "counter", "series": [
          {"labels": {}, "increase": 12800, "rate_per_s": 1254.126}]},
        "vllm:kv_cache_usage_perc": {"type": "gauge", "series": [{"labels": {}}]},
        "vllm:time_to_first_token_seconds": {"type": "histogram", "series": [
          {"labels": {}, "count": 40, "sum": 2, "mean": 0.05, "p50": 0.0475, "p99": null}]},
        "something_else": {"type": "gauge", "series": [{"labels": {}, "mean": 1, "max": 1}]}
      }}]})");
  EXPECT_EQ(server_metrics_console_block(summary),
            "============ Server metrics (scraped) ============\n"
            "Endpoint:                                http://decode:8000/metrics\n"
            "Scrapes / failed:                        31 / 1\n"
            "First scrape error:                      GET http://decode:8000/metrics: HTTP 503\n"
            "Running requests [engine=0], mean/max:   12.35 / 16\n"
            "Running requests [engine=1], mean/max:   3 / 4\n"
            "KV cache usage (%), mean/max:            n/a / n/a\n"
            "Generation tokens, increase:             12800 (1254.13/s)\n"
            "Server TTFT (ms), mean/p50/p99:          50 / 47.50 / n/a\n"
            "==================================================\n");
}

// The simulator falling behind its schedule is one console line, not only a figure in the
// server-metrics block (issue 17: a run showed `Sim emission lag max 176 ms` and nothing else).
TEST(SimLagWarning, SaidWhenTheP99OrTheMaxPassesItsThreshold) {
  const auto headline = [](const char* json) {
    return nlohmann::json{{"headline", nlohmann::json::parse(json)}};
  };
  const std::string late = sim_lag_warning(
      headline(R"({"sim_emission_lag_ms_p99": 2.5, "sim_emission_lag_max_ms_max": 176})"));
  EXPECT_EQ(late,
            "WARNING: the simulator fell behind its own schedule (emission lag p99 2.5 ms, max "
            "176.0 ms; warns above p99 10 ms or max 50 ms): the machine is too busy for this "
            "load, and TTFT/ITL include that lag.");
  EXPECT_NE(sim_lag_warning(headline(R"({"sim_emission_lag_ms_p99": 12})")).find("p99 12.0 ms"),
            std::string::npos);
  // A p99 interpolated above the largest lag is shown as the largest.
  EXPECT_NE(
      sim_lag_warning(
          headline(R"({"sim_emission_lag_ms_p99": 45.6, "sim_emission_lag_max_ms_max": 41.2})"))
          .find("p99 41.2 ms, max 41.2 ms"),
      std::string::npos);
  // Within both, or a server that is no servebench simulator: nothing.
  EXPECT_EQ(sim_lag_warning(
                headline(R"({"sim_emission_lag_ms_p99": 9.9, "sim_emission_lag_max_ms_max": 50})")),
            "");
  EXPECT_EQ(sim_lag_warning(headline(R"({"running_requests_max": 4})")), "");
  EXPECT_EQ(sim_lag_warning(nlohmann::json()), "");
}

// The lag histogram is a known metric: its mean/p50/p99 are in the block and the headline.
TEST(SimLagWarning, TheLagHistogramIsAKnownMetric) {
  const auto& known = server_metrics::known_metrics();
  EXPECT_TRUE(std::any_of(known.begin(), known.end(), [](const server_metrics::KnownMetric& k) {
    return std::string(k.key) == "sim_emission_lag_ms" && !k.names.empty() &&
           std::string(k.names[0]) == "servebench_sim:emission_lag_seconds";
  }));
}

}  // namespace
}  // namespace servebench::report
