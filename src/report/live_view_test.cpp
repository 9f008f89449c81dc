#include "report/live_view.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metrics/metrics.h"
#include "record/record.h"

namespace servebench::report {
namespace {

// A finished request: TTFT `ttft_ms`, then one token every `itl_ms` (4 tokens).
record::RequestRecord done(uint64_t index, int64_t ttft_ms, int64_t itl_ms) {
  record::RequestRecord r;
  r.index = index;
  r.intended_ns = r.sent_ns = 0;
  r.first_byte_ns = r.first_token_ns = ttft_ms * 1'000'000;
  for (int i = 0; i < 4; ++i) r.chunk_ns.push_back(r.first_token_ns + i * itl_ms * 1'000'000);
  r.last_token_ns = r.done_ns = r.chunk_ns.back();
  r.prompt_tokens = 8;
  r.server_completion_tokens = 4;
  r.http_status = 200;
  r.success = true;
  return r;
}

LiveFrame example_frame() {
  std::vector<record::RequestRecord> window;
  for (uint64_t i = 0; i < 100; ++i) window.push_back(done(i, 10 + static_cast<int64_t>(i), 2));
  metrics::Options mo;
  mo.percentiles = {50, 99};
  LiveFrame f;
  f.elapsed_s = 75;
  f.planned_s = 120;
  f.planned = 1200;
  f.sent = 760;
  f.completed = 740;
  f.failed = 3;
  f.send_rate = 10.04;
  f.target_rate = "10.0 req/s";
  f.window = metrics::compute(window, 10, mo);
  f.errors = {{"http_503", 2}, {"timeout", 1}};
  f.scraping = true;
  f.server.running = 17;
  f.server.waiting = 2;
  f.server.kv_cache_pct = 41.25;
  return f;
}

TEST(LiveView, LinesShowTheWindowsFiguresFromTheMetricsCode) {
  const std::vector<std::string> lines = live_lines(example_frame(), 0);
  ASSERT_EQ(lines.size(), kLiveLines);
  EXPECT_EQ(lines[0],
            "servebench live  01:15 / 02:00  requests: 1200 planned, 760 sent, 740 done, 3 "
            "failed");
  EXPECT_EQ(lines[1], "  rate         10.04 req/s (last 10 s), target 10.0 req/s   in flight 17");
  EXPECT_EQ(lines[2], "  output        40.0 tok/s (last 10 s), 100 requests finished in it");
  // numpy's linear percentiles of 10..109 ms: p50 59.5, p99 108.01.
  EXPECT_EQ(lines[3], "  TTFT      p50    59.5 ms  p99   108.0 ms");
  EXPECT_EQ(lines[4], "  ITL       p50     2.0 ms  p99     2.0 ms");
  EXPECT_EQ(lines[5], "  errors    http_503 2, timeout 1");
  EXPECT_EQ(lines[6], "  server    running 17  waiting 2  KV cache 41.2%");
}

TEST(LiveView, SameLineCountWithoutSamplesOrScrapesAndCutToTheWidth) {
  LiveFrame f;
  f.target_rate = "inf";
  std::vector<std::string> lines = live_lines(f, 30);
  ASSERT_EQ(lines.size(), kLiveLines);
  for (const std::string& line : lines) EXPECT_LE(line.size(), 30u) << line;
  lines = live_lines(f, 0);
  EXPECT_EQ(lines[0].find("servebench live  00:00 / --:--"), 0u) << lines[0];
  EXPECT_EQ(lines[3], "  TTFT      p50      -     p99      -");
  EXPECT_EQ(lines[5], "  errors    none");
  EXPECT_NE(lines[6].find("no /metrics scrapes"), std::string::npos);
  f.stopping = true;
  EXPECT_NE(live_lines(f, 0)[0].find("[stopping: draining]"), std::string::npos);
}

TEST(LiveView, RedrawMovesUpOverThePreviousBlockAndErasesEachLine) {
  const std::vector<std::string> lines = {"a", "bb"};
  EXPECT_EQ(live_redraw(lines, 0), "\r\x1b[2Ka\n\r\x1b[2Kbb\n");
  EXPECT_EQ(live_redraw(lines, 2), "\x1b[2A\r\x1b[2Ka\n\r\x1b[2Kbb\n");
}

}  // namespace
}  // namespace servebench::report
