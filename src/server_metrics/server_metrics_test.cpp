#include "server_metrics/server_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/error.h"
#include "sim/sim.h"

namespace servebench::server_metrics {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string error_of(std::string_view text) {
  try {
    parse_exposition(text, "http://h/metrics");
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    return e.what();
  }
  return "(no error)";
}

TEST(Exposition, ParsesTypesLabelsAndSpecialValues) {
  const Exposition e = parse_exposition(
      "# HELP vllm:num_requests_running Number of requests.\n"
      "# TYPE vllm:num_requests_running gauge\n"
      "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 3\r\n"
      "\n"
      "# a comment\n"
      "x_bucket{le=\"+Inf\"} +Inf 1700000000000\n"
      "odd{path=\"a\\\"b\\\\c\\nd\",} NaN\n"
      "plain -1.5e3\n"
      "# EOF\n",
      "src");
  ASSERT_EQ(e.samples.size(), 4u);
  EXPECT_EQ(e.samples[0].name, "vllm:num_requests_running");
  EXPECT_EQ(e.samples[0].labels, "engine=\"0\",model_name=\"m\"");  // sorted
  EXPECT_EQ(e.samples[0].value, 3);
  EXPECT_EQ(e.samples[1].value, kInf);
  EXPECT_EQ(e.samples[2].labels, "path=\"a\\\"b\\\\c\\nd\"");
  EXPECT_TRUE(std::isnan(e.samples[2].value));
  EXPECT_EQ(e.samples[3].labels, "");
  EXPECT_EQ(e.samples[3].value, -1500);
  EXPECT_EQ(e.types.at("vllm:num_requests_running"), MetricType::kGauge);
}

TEST(Exposition, BadLinesNameTheSourceAndLine) {
  EXPECT_EQ(error_of("ok 1\nbroken\n"),
            "http://h/metrics line 2: missing sample value at column 7");
  EXPECT_NE(error_of("x 1.2.3\n").find("line 1: bad number '1.2.3'"), std::string::npos);
  EXPECT_NE(error_of("x{a=\"1} 2\n").find("line 1: unterminated label value"), std::string::npos);
  EXPECT_NE(error_of("x{a=\"1\",a=\"2\"} 2\n").find("label a given twice"), std::string::npos);
  EXPECT_NE(error_of("x 1 2 3\n").find("unexpected text after the sample"), std::string::npos);
  EXPECT_NE(error_of("x{a=\"\\q\"} 1\n").find("bad escape"), std::string::npos);
  EXPECT_NE(error_of("9x 1\n").find("expected a metric or label name"), std::string::npos);
}

TEST(Exposition, FamilyOfSuffixedSamples) {
  const Exposition e = parse_exposition(
      "# TYPE vllm:prompt_tokens_total counter\n"
      "# TYPE om counter\n"
      "# TYPE lat histogram\n",
      "src");
  EXPECT_EQ(family_of(e, "vllm:prompt_tokens_total"),
            std::make_pair(std::string("vllm:prompt_tokens_total"), MetricType::kCounter));
  EXPECT_EQ(family_of(e, "om_total"), std::make_pair(std::string("om"), MetricType::kCounter));
  EXPECT_EQ(family_of(e, "lat_bucket"), std::make_pair(std::string("lat"), MetricType::kHistogram));
  EXPECT_EQ(family_of(e, "unknown_sum"),
            std::make_pair(std::string("unknown_sum"), MetricType::kUntyped));
}

TEST(HistogramQuantile, InterpolatesAsPrometheus) {
  const std::vector<std::pair<double, double>> b = {{0.1, 10}, {0.5, 30}, {1, 40}, {kInf, 40}};
  EXPECT_DOUBLE_EQ(histogram_quantile(0.25, b), 0.1);  // lowest bucket starts at 0
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, b), 0.3);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.99, b), 0.98);
  // A rank in the +Inf bucket: the highest finite bound.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.9, {{1, 5}, {kInf, 10}}), 1);
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1, 0}, {kInf, 0}})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1, 3}})));  // no +Inf bucket
}

Scrape scrape_at(int64_t t_ns, std::string_view text) {
  return Scrape{t_ns, parse_exposition(text, "test")};
}

std::string scrape_text(double running, double tokens, double lat_fast, double lat_all,
                        double lat_sum) {
  return "# TYPE running gauge\nrunning{e=\"0\"} " + std::to_string(running) +
         "\n# TYPE tokens_total counter\ntokens_total " + std::to_string(tokens) +
         "\ntokens_created 1.7e9\n# TYPE lat histogram\nlat_bucket{le=\"0.5\"} " +
         std::to_string(lat_fast) + "\nlat_bucket{le=\"+Inf\"} " + std::to_string(lat_all) +
         "\nlat_sum " + std::to_string(lat_sum) + "\nlat_count " + std::to_string(lat_all) + "\n";
}

TEST(Summarize, GaugesCountersWithResetsAndHistogramsInTheWindow) {
  constexpr int64_t kS = 1'000'000'000;
  EndpointSeries e;
  e.url = "http://h/metrics";
  e.scrapes.push_back(scrape_at(0, scrape_text(100, 0, 0, 0, 0)));  // before the window
  e.scrapes.push_back(scrape_at(1 * kS, scrape_text(2, 5, 1, 2, 1.0)));
  e.scrapes.push_back(scrape_at(2 * kS, scrape_text(4, 10, 3, 4, 2.0)));
  e.scrapes.push_back(scrape_at(3 * kS, scrape_text(6, 2, 3, 6, 4.0)));  // counter restarted
  e.scrapes.push_back(scrape_at(5 * kS, scrape_text(8, 4, 5, 10, 6.0)));
  e.scrapes.push_back(scrape_at(9 * kS, scrape_text(100, 90, 9, 99, 60)));  // after it
  e.failures = 1;
  e.first_error = "GET http://h/metrics: HTTP 503";

  SummaryOptions options;
  options.from_ns = 1 * kS;
  options.to_ns = 5 * kS;
  options.with_timeseries = true;
  options.origin_ns = 1 * kS;
  options.interval_s = 1.0;
  const nlohmann::json j = summarize({e}, options);
  EXPECT_EQ(j["interval_s"], 1.0);
  const nlohmann::json& ep = j["endpoints"][0];
  EXPECT_EQ(ep["scrapes"], 4);
  EXPECT_EQ(ep["failures"], 1);
  EXPECT_EQ(ep["first_error"], "GET http://h/metrics: HTTP 503");
  const nlohmann::json& m = ep["metrics"];
  EXPECT_FALSE(m.contains("tokens_created"));

  const nlohmann::json& running = m["running"];
  EXPECT_EQ(running["type"], "gauge");
  EXPECT_EQ(running["series"][0]["labels"], nlohmann::json({{"e", "0"}}));
  EXPECT_DOUBLE_EQ(running["series"][0]["mean"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(running["series"][0]["max"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(running["series"][0]["min"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(running["series"][0]["last"].get<double>(), 8);
  ASSERT_EQ(running["series"][0]["timeseries"].size(), 4u);
  EXPECT_DOUBLE_EQ(running["series"][0]["timeseries"][3][0].get<double>(), 4.0);  // 5 s - 1 s

  const nlohmann::json& tokens = m["tokens_total"]["series"][0];
  EXPECT_EQ(m["tokens_total"]["type"], "counter");
  EXPECT_DOUBLE_EQ(tokens["increase"].get<double>(), 5 + 2 + 2);  // the drop is a restart
  EXPECT_DOUBLE_EQ(tokens["rate_per_s"].get<double>(), 9.0 / 4.0);

  const nlohmann::json& lat = m["lat"]["series"][0];
  EXPECT_EQ(m["lat"]["type"], "histogram");
  EXPECT_DOUBLE_EQ(lat["count"].get<double>(), 8);  // 10 - 2
  EXPECT_DOUBLE_EQ(lat["sum"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(lat["mean"].get<double>(), 5.0 / 8);
  // 4 of the 8 new observations are under 0.5: the median is the bucket's top.
  EXPECT_DOUBLE_EQ(lat["p50"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(lat["p99"].get<double>(), 0.5);  // +Inf bucket: the highest finite bound
}

// The classic text format prometheus_client writes for vLLM (counters typed with their _total
// name, a _created sample beside each counter and histogram, float label values for le).
std::string vllm_style(double prompt_tokens, double ttft_fast, double ttft_all, double ttft_sum) {
  const std::string labels = "engine=\"0\",model_name=\"meta-llama/Llama-3.1-8B-Instruct\"";
  return "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
         "# TYPE vllm:prompt_tokens_total counter\n"
         "vllm:prompt_tokens_total{" +
         labels + "} " + std::to_string(prompt_tokens) +
         "\n"
         "vllm:prompt_tokens_created{" +
         labels +
         "} 1.7639e+09\n"
         "# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.\n"
         "# TYPE vllm:time_to_first_token_seconds histogram\n"
         "vllm:time_to_first_token_seconds_bucket{" +
         labels + ",le=\"0.04\"} " + std::to_string(ttft_fast) +
         "\n"
         "vllm:time_to_first_token_seconds_bucket{" +
         labels + ",le=\"+Inf\"} " + std::to_string(ttft_all) +
         "\n"
         "vllm:time_to_first_token_seconds_count{" +
         labels + "} " + std::to_string(ttft_all) +
         "\n"
         "vllm:time_to_first_token_seconds_sum{" +
         labels + "} " + std::to_string(ttft_sum) +
         "\n"
         "vllm:time_to_first_token_seconds_created{" +
         labels + "} 1.7639e+09\n";
}

TEST(Summarize, VllmClassicFormatCountersAndHistograms) {
  EndpointSeries e;
  e.scrapes.push_back(scrape_at(0, vllm_style(100, 1, 1, 0.02)));
  e.scrapes.push_back(scrape_at(1'000'000'000, vllm_style(4196, 9, 11, 0.52)));
  const nlohmann::json m = summarize({e}, SummaryOptions{})["endpoints"][0]["metrics"];
  ASSERT_EQ(m.size(), 2u) << m.dump();  // the _created samples are not metrics
  const nlohmann::json& prompt = m["vllm:prompt_tokens_total"];
  EXPECT_EQ(prompt["type"], "counter");
  EXPECT_DOUBLE_EQ(prompt["series"][0]["increase"].get<double>(), 4096);
  EXPECT_EQ(prompt["series"][0]["labels"]["model_name"], "meta-llama/Llama-3.1-8B-Instruct");
  const nlohmann::json& ttft = m["vllm:time_to_first_token_seconds"]["series"][0];
  EXPECT_DOUBLE_EQ(ttft["count"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(ttft["sum"].get<double>(), 0.5);
  EXPECT_FALSE(ttft["labels"].contains("le"));
  EXPECT_DOUBLE_EQ(ttft["p50"].get<double>(), 0.025);  // rank 5 of 8 in (0, 0.04]
}

// Two data-parallel engines: requests add up per scrape, KV usage takes the fuller engine,
// counters add, histograms merge their buckets.
std::string two_engines(double run0, double run1, double kv0, double kv1, double tokens,
                        double fast, double all) {
  auto line = [](const std::string& name, const char* engine, double v) {
    return name + "{engine=\"" + engine + "\"} " + std::to_string(v) + "\n";
  };
  return "# TYPE vllm:num_requests_running gauge\n" + line("vllm:num_requests_running", "0", run0) +
         line("vllm:num_requests_running", "1", run1) + "# TYPE vllm:kv_cache_usage_perc gauge\n" +
         line("vllm:kv_cache_usage_perc", "0", kv0) + line("vllm:kv_cache_usage_perc", "1", kv1) +
         "# TYPE vllm:generation_tokens counter\n" +
         line("vllm:generation_tokens_total", "0", tokens) +
         line("vllm:generation_tokens_total", "1", 2 * tokens) +
         "# TYPE vllm:e2e_request_latency_seconds histogram\n" +
         "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"1.0\"} " +
         std::to_string(fast) + "\n" +
         "vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\"} " +
         std::to_string(all) + "\n" +
         "vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"1.0\"} " +
         std::to_string(fast) + "\n" +
         "vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"+Inf\"} " +
         std::to_string(all) + "\n" + line("vllm:e2e_request_latency_seconds_count", "0", all) +
         line("vllm:e2e_request_latency_seconds_count", "1", all) +
         line("vllm:e2e_request_latency_seconds_sum", "0", all * 0.5) +
         line("vllm:e2e_request_latency_seconds_sum", "1", all * 0.5);
}

TEST(Summarize, HeadlineAddsEnginesAndEndpoints) {
  constexpr int64_t kS = 1'000'000'000;
  EndpointSeries a;
  a.scrapes.push_back(scrape_at(0, two_engines(1, 3, 0.25, 0.5, 0, 0, 0)));
  a.scrapes.push_back(scrape_at(2 * kS, two_engines(5, 7, 0.75, 0.5, 10, 3, 4)));
  nlohmann::json h = summarize({a}, SummaryOptions{})["headline"];
  EXPECT_DOUBLE_EQ(h["running_requests_mean"].get<double>(), (4 + 12) / 2.0);  // per-scrape sums
  EXPECT_DOUBLE_EQ(h["running_requests_max"].get<double>(), 12);
  EXPECT_DOUBLE_EQ(h["kv_cache_usage_pct_mean"].get<double>(), (50 + 75) / 2.0);  // fuller one
  EXPECT_DOUBLE_EQ(h["kv_cache_usage_pct_max"].get<double>(), 75);
  EXPECT_DOUBLE_EQ(h["generation_tokens"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(h["generation_tokens_per_s"].get<double>(), 15);
  // 8 requests, 6 under 1 s: the median lies in (0, 1], at 4 / 6 of it.
  EXPECT_DOUBLE_EQ(h["e2e_latency_ms_mean"].get<double>(), 500);
  EXPECT_NEAR(h["e2e_latency_ms_p50"].get<double>(), 1000 * 4.0 / 6, 1e-9);
  EXPECT_DOUBLE_EQ(h["e2e_latency_ms_p99"].get<double>(), 1000);  // in +Inf: the top bound
  EXPECT_FALSE(h.contains("waiting_requests_mean"));              // not exposed

  // A second endpoint (another server): its figures add to the first's.
  h = summarize({a, a}, SummaryOptions{})["headline"];
  EXPECT_DOUBLE_EQ(h["running_requests_max"].get<double>(), 24);
  EXPECT_DOUBLE_EQ(h["kv_cache_usage_pct_max"].get<double>(), 75);
  EXPECT_DOUBLE_EQ(h["generation_tokens"].get<double>(), 60);
}

std::string spec_text(int drafts, int draft_tokens, int accepted, std::vector<int> per_position) {
  std::string text =
      "# TYPE vllm:spec_decode_num_drafts counter\n"
      "vllm:spec_decode_num_drafts_total{engine=\"0\"} " +
      std::to_string(drafts) +
      "\nvllm:spec_decode_num_drafts_created{engine=\"0\"} 1.7e9\n"
      "vllm:spec_decode_num_draft_tokens_total{engine=\"0\"} " +
      std::to_string(draft_tokens) + "\nvllm:spec_decode_num_accepted_tokens_total{engine=\"0\"} " +
      std::to_string(accepted) + "\n";
  for (size_t i = 0; i < per_position.size(); ++i) {
    text += "vllm:spec_decode_num_accepted_tokens_per_pos_total{engine=\"0\",position=\"" +
            std::to_string(i) + "\"} " + std::to_string(per_position[i]) + "\n";
  }
  return text;
}

// vLLM's figures from the counters' increase between the first and the last scrape (the
// scrapes between are ignored; hand-computed: 75 of 120 draft tokens accepted over 40 drafts).
TEST(SpecDecodeStats, IncreaseBetweenFirstAndLastScrapeAsVllmComputesIt) {
  EndpointSeries e;
  e.scrapes = {scrape_at(0, spec_text(10, 30, 20, {9, 7, 4})),
               scrape_at(1, spec_text(11, 33, 21, {9, 7, 4})),
               scrape_at(2, spec_text(50, 150, 95, {45, 32, 18}))};
  const std::optional<SpecDecodeStats> stats = spec_decode_stats({e});
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->num_drafts, 40);
  EXPECT_EQ(stats->draft_tokens, 120);
  EXPECT_EQ(stats->accepted_tokens, 75);
  EXPECT_DOUBLE_EQ(stats->acceptance_rate, 62.5);
  EXPECT_DOUBLE_EQ(stats->acceptance_length, 2.875);
  EXPECT_EQ(stats->per_position_acceptance_rates, (std::vector<double>{0.9, 0.625, 0.35}));

  // Two endpoints add up.
  const std::optional<SpecDecodeStats> both = spec_decode_stats({e, e});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->draft_tokens, 240);
  EXPECT_DOUBLE_EQ(both->acceptance_length, 2.875);
}

TEST(SpecDecodeStats, AbsentWithoutCountersDraftsOrASecondScrape) {
  EndpointSeries plain;
  plain.scrapes = {scrape_at(0, scrape_text(1, 10, 1, 2, 0.3)),
                   scrape_at(1, scrape_text(1, 20, 1, 2, 0.3))};
  EXPECT_FALSE(spec_decode_stats({plain}).has_value());
  EndpointSeries idle;  // speculative decoding on, but nothing drafted during the run
  idle.scrapes = {scrape_at(0, spec_text(10, 30, 20, {})), scrape_at(1, spec_text(10, 30, 20, {}))};
  EXPECT_FALSE(spec_decode_stats({idle}).has_value());
  EndpointSeries once;
  once.scrapes = {scrape_at(0, spec_text(10, 30, 20, {}))};
  EXPECT_FALSE(spec_decode_stats({once}).has_value());
}

TEST(Sampler, ScrapesTheSimulatorFromStartToStop) {
  sim::Options options;
  options.port = 0;
  sim::Server server(options);
  server.start();
  SamplerOptions so;
  const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/metrics";
  so.targets = {{url, url}};
  so.interval_s = 0.02;
  probe(so.targets[0], so);
  Sampler sampler(so);
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::vector<EndpointSeries> series = sampler.stop();
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].url, url);
  EXPECT_EQ(series[0].failures, 0u) << series[0].first_error;
  ASSERT_GE(series[0].scrapes.size(), 2u);  // the baseline and the end, at least
  for (const Scrape& s : series[0].scrapes) {
    EXPECT_EQ(family_of(s.exposition, "vllm:num_requests_running").second, MetricType::kGauge);
  }
  EXPECT_LE(series[0].scrapes.front().t_ns, series[0].scrapes.back().t_ns);
}

TEST(Sampler, FailuresAreCountedWithoutCredentials) {
  SamplerOptions so;
  // Port 1 on loopback: refused at once.
  so.targets = {{"http://user:hunter2@127.0.0.1:1/metrics", "http://127.0.0.1:1/metrics"}};
  so.headers = {"Authorization: Bearer sk-secret-key-123456"};
  so.timeout_s = 2;
  try {
    probe(so.targets[0], so);
    ADD_FAILURE() << "probe of a closed port succeeded";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kNetwork);
    EXPECT_EQ(std::string(e.what()).find("hunter2"), std::string::npos) << e.what();
  }
  Sampler sampler(so);
  sampler.start();
  const std::vector<EndpointSeries> series = sampler.stop();
  EXPECT_TRUE(series[0].scrapes.empty());
  EXPECT_GE(series[0].failures, 2u);
  EXPECT_NE(series[0].first_error.find("GET http://127.0.0.1:1/metrics: could not scrape"),
            std::string::npos)
      << series[0].first_error;
  EXPECT_EQ(series[0].first_error.find("hunter2"), std::string::npos);
  EXPECT_EQ(series[0].first_error.find("sk-secret"), std::string::npos);
}

}  // namespace
}  // namespace servebench::server_metrics
