// Timelines: per-window client series from a run's records (or vLLM's detailed arrays), server
// series from the scraped timeseries, checked against hand-computed windows.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "record/record.h"
#include "report/charts.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using namespace test_support;

record::RequestRecord request(uint64_t index, double sent_s, std::vector<double> chunks_s,
                              bool success, int tokens) {
  auto ns = [](double s) { return static_cast<int64_t>(std::llround(s * 1e9)); };
  record::RequestRecord r;
  r.index = index;
  r.sent_ns = ns(sent_s);
  for (double c : chunks_s) r.chunk_ns.push_back(ns(c));
  if (!chunks_s.empty()) {
    r.first_token_ns = r.chunk_ns.front();
    r.last_token_ns = r.chunk_ns.back();
  }
  r.done_ns = r.chunk_ns.empty() ? ns(sent_s + 0.3) : r.chunk_ns.back();
  r.success = success;
  r.http_status = success ? 200 : 503;
  r.error = success ? "" : "HTTP 503";
  r.server_completion_tokens = tokens;
  return r;
}

// Four requests in 1 s windows: sent 0.1, 0.2 | 1.1, 1.5; ended 0.9, 1.4 | 1.8 (failed) | 2.5.
std::string write_run(const TempDir& dir) {
  std::string records;
  records += record::to_json_line(request(0, 0.1, {0.3, 0.5, 0.9}, true, 6)) + "\n";
  records += record::to_json_line(request(1, 0.2, {0.6, 1.4}, true, 4)) + "\n";
  records += record::to_json_line(request(2, 1.1, {1.3, 2.5}, true, 2)) + "\n";
  records += record::to_json_line(request(3, 1.5, {}, false, -1)) + "\n";
  record::RequestRecord warmup = request(4, 0.0, {0.05}, true, 1);
  warmup.warmup = true;  // not part of the run
  records += record::to_json_line(warmup) + "\n";
  dir.write("run_a.records.jsonl", records);
  const json result = {
      {"completed", 3},
      {"request_throughput", 1.2},
      {"servebench",
       {// Where the run wrote it; moved since: found beside the result by its name.
        {"records_file", "/nonexistent/elsewhere/run_a.records.jsonl"},
        {"server_metrics",
         {{"endpoints",
           json::array(
               {{{"url", "http://h:8000/metrics"},
                 {"metrics",
                  {{"vllm:num_requests_running",
                    {{"type", "gauge"},
                     {"series",
                      json::array({{{"labels", json::object()},
                                    {"timeseries",
                                     json::array({{-0.02, 0}, {0.3, 2}, {0.6, 4}, {1.2, 1}})}}})}}},
                   {"vllm:generation_tokens",
                    {{"type", "counter"},
                     {"series",
                      json::array({{{"labels", json::object()},
                                    {"timeseries", json::array({{0.0, 0},
                                                                {0.5, 10},
                                                                {1.0, 20},
                                                                {1.5, 30},
                                                                {2.0, 40}})}}})}}}}}}})}}}}}};
  return dir.write("run_a.json", result.dump());
}

const ChartData* panel(const std::vector<ChartData>& panels, const std::string& slug) {
  for (const ChartData& p : panels) {
    if (p.slug == "timeline-" + slug) return &p;
  }
  return nullptr;
}

std::vector<double> ys(const ChartLine& line) {
  std::vector<double> out;
  for (const ChartPoint& p : line.points) out.push_back(p.y);
  return out;
}

TEST(Timeline, ClientWindowsFromTheRecordsBesideTheResult) {
  TempDir dir;
  const CompareInput inputs[] = {{"a", load_runs(write_run(dir))}};
  const std::vector<ChartData> panels = timeline_panels(inputs, 1.0);
  const ChartData* sent = panel(panels, "sent");
  ASSERT_TRUE(sent);
  ASSERT_EQ(sent->lines.size(), 1u);
  EXPECT_EQ(sent->lines[0].name, "run_a");
  EXPECT_FALSE(sent->lines[0].markers);
  EXPECT_EQ(ys(sent->lines[0]), (std::vector<double>{2, 2, 0}));
  EXPECT_DOUBLE_EQ(sent->lines[0].points[0].x, 0.5);  // the window's middle
  EXPECT_EQ(ys(panel(panels, "completed")->lines[0]), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(ys(panel(panels, "failed")->lines[0]), (std::vector<double>{0, 1, 0}));
  // 6 tokens over 3 chunks in window 0; 4 over 2 (0.6 | 1.4); 2 over 2 (1.3 | 2.5).
  EXPECT_EQ(ys(panel(panels, "output-tokens")->lines[0]), (std::vector<double>{8, 3, 1}));
  const std::vector<double> in_flight = ys(panel(panels, "in-flight")->lines[0]);
  ASSERT_EQ(in_flight.size(), 3u);
  EXPECT_NEAR(in_flight[0], 0.8 + 0.8, 1e-9);
  EXPECT_NEAR(in_flight[1], 0.4 + 0.9 + 0.3, 1e-9);
  EXPECT_NEAR(in_flight[2], 0.5, 1e-9);
  // TTFT by first-token time: 200 and 400 ms in window 0, 200 ms in window 1.
  const ChartData* ttft = panel(panels, "ttft");
  ASSERT_EQ(ttft->lines.size(), 2u);
  EXPECT_EQ(ttft->lines[0].name, "run_a p50");
  EXPECT_TRUE(ttft->lines[1].dashed);
  EXPECT_EQ(ttft->lines[0].color, ttft->lines[1].color);
  EXPECT_NEAR(ttft->lines[0].points[0].y, 300, 1e-6);
  EXPECT_NEAR(ttft->lines[1].points[0].y, 200 + 0.99 * 200, 1e-6);
  EXPECT_NEAR(ttft->lines[0].points[1].y, 200, 1e-6);
  EXPECT_TRUE(std::isnan(ttft->lines[0].points[2].y));  // no first token in window 2: a gap
  // ITL by the later chunk: 200, 400 ms in window 0; 800 ms (0.6 → 1.4) in window 1.
  EXPECT_NEAR(panel(panels, "itl")->lines[0].points[1].y, 800, 1e-6);
}

TEST(Timeline, ServerSeriesFromTheScrapes) {
  TempDir dir;
  const CompareInput inputs[] = {{"a", load_runs(write_run(dir))}};
  const std::vector<ChartData> panels = timeline_panels(inputs, 1.0);
  // The gauge's scrapes averaged per window, the baseline before the start left out.
  EXPECT_EQ(ys(panel(panels, "server-running")->lines[0]), (std::vector<double>{3, 1}));
  // The counter as a rate: 10 tokens every 0.5 s.
  for (double y : ys(panel(panels, "server-generation-tokens")->lines[0])) EXPECT_NEAR(y, 20, 1e-9);
  EXPECT_FALSE(panel(panels, "server-waiting"));      // not scraped
  EXPECT_FALSE(panel(panels, "server-preemptions"));  // not scraped
}

// What every result keeps (run/server_timeline.h): the values per scrape, null where a scrape
// lacked the series; no --save-detailed `timeseries`.
TEST(Timeline, ServerSeriesFromTheCompactTimeline) {
  TempDir dir;
  const json timeline = {
      {"t_s", {-0.02, 0.3, 0.5, 0.6, 1.0, 1.2, 1.5, 2.0}},
      {"vllm:num_requests_running", {{"", {0, 2, nullptr, 4, nullptr, 1, nullptr, nullptr}}}},
      {"vllm:generation_tokens", {{"model_name=\"m\"", {-0.4, 6, 10, 12, 20, 24, 30, 40}}}},
      {"node_network_receive_bytes_total",
       {{"device=\"lo\"", {0, 1e9, 2e9, 3e9, 4e9, 5e9, 6e9, 7e9}},
        {"device=\"eth0\"", {-2e4, 3e5, 5e5, 6e5, 1e6, 1.2e6, 1.5e6, 2e6}}}},
      // NVLink bytes/s per GPU (a gauge), summed over the GPUs: 2 + 3 MB/s.
      {"DCGM_FI_PROF_NVLINK_TX_BYTES",
       {{"gpu=\"0\"", {0, 2e6, 2e6, 2e6, 2e6, 2e6, 2e6, 2e6}},
        {"gpu=\"1\"", {0, 3e6, 3e6, 3e6, 3e6, 3e6, 3e6, 3e6}}}}};
  const json result = {{"completed", 1},
                       {"request_throughput", 1.0},
                       {"servebench",
                        {{"server_metrics",
                          {{"endpoints", json::array({{{"url", "http://h:8000/metrics"},
                                                       {"metrics", json::object()},
                                                       {"timeline", timeline}}})}}}}}};
  const CompareInput inputs[] = {{"c", load_runs(dir.write("run_c.json", result.dump()))}};
  const std::vector<ChartData> panels = timeline_panels(inputs, 1.0);
  ASSERT_TRUE(panel(panels, "server-running"));
  EXPECT_EQ(ys(panel(panels, "server-running")->lines[0]), (std::vector<double>{3, 1}));
  for (double y : ys(panel(panels, "server-generation-tokens")->lines[0])) EXPECT_NEAR(y, 20, 1e-9);
  // Loopback left out: 1 MB/s on eth0 only.
  for (double y : ys(panel(panels, "network-receive")->lines[0])) EXPECT_NEAR(y, 1, 1e-9);
  ASSERT_TRUE(panel(panels, "nvlink-transmit"));
  for (double y : ys(panel(panels, "nvlink-transmit")->lines[0])) EXPECT_NEAR(y, 5, 1e-9);
  EXPECT_FALSE(panel(panels, "server-waiting"));
}

TEST(Timeline, VllmDetailedArraysFromTheirOwnClock) {
  TempDir dir;
  // vLLM's start_times are perf_counter readings: the first becomes 0.
  const json result = {
      {"completed", 2},        {"request_throughput", 1.0}, {"start_times", {1000.25, 1001.5}},
      {"ttfts", {0.5, 0.25}},  {"latencies", {0.75, 0.5}},  {"itls", {{0.125, 0.125}, {0.25}}},
      {"output_lens", {3, 2}}, {"errors", {"", ""}}};
  const CompareInput inputs[] = {{"v", load_runs(dir.write("vllm.json", result.dump()))}};
  const std::vector<ChartData> panels = timeline_panels(inputs, 1.0);
  EXPECT_EQ(ys(panel(panels, "sent")->lines[0]), (std::vector<double>{1, 1}));
  EXPECT_EQ(ys(panel(panels, "completed")->lines[0]), (std::vector<double>{1, 1}));
  EXPECT_FALSE(panel(panels, "failed"));          // only zeros: left out
  EXPECT_FALSE(panel(panels, "server-running"));  // vLLM keeps no scrapes
  EXPECT_EQ(ys(panel(panels, "output-tokens")->lines[0]), (std::vector<double>{3, 2}));
}

TEST(Timeline, RunsWithoutDetailHaveNoTimeline) {
  const CompareInput inputs[] = {{"r", load_runs(testdata_path("ib"))}};
  EXPECT_TRUE(timeline_panels(inputs).empty());
  EXPECT_THROW(render_timeline({}, ImageFormat::kPng), core::Error);
}

TEST(Timeline, MalformedRecordsNameTheFileAndLine) {
  TempDir dir;
  const std::string result = write_run(dir);
  dir.write("run_a.records.jsonl", "{\"index\": \"zero\"}\n");
  const CompareInput inputs[] = {{"a", load_runs(result)}};
  try {
    timeline_panels(inputs);
    ADD_FAILURE() << "accepted";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("run_a.records.jsonl line 1"), std::string::npos)
        << e.what();
  }
}

TEST(Timeline, DrawnAsOnePageOfPanels) {
  TempDir dir;
  const CompareInput inputs[] = {{"a", load_runs(write_run(dir))}};
  const std::vector<ChartData> panels = timeline_panels(inputs);
  const std::string png = render_timeline(panels, ImageFormat::kPng);
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const std::string pdf = render_timeline(panels, ImageFormat::kPdf);
  EXPECT_EQ(pdf.substr(0, 4), "%PDF");
}

}  // namespace
}  // namespace servebench::report
