// The --save-result JSON: vLLM's keys with vLLM's types and units, the detailed arrays, the
// servebench extras under their own key, and a round trip through nlohmann.
#include <gtest/gtest.h>

#include <cmath>

#include "metrics/metrics.h"
#include "report/report.h"
#include "report/test_support.h"

namespace servebench::report {
namespace {

using nlohmann::json;
using record::RequestRecord;

constexpr int64_t kMs = 1'000'000;

RequestRecord ok(uint64_t index, int64_t sent_ms, std::vector<int64_t> chunks_ms, int32_t tokens) {
  RequestRecord r;
  r.index = index;
  r.intended_ns = sent_ms * kMs;
  r.sent_ns = sent_ms * kMs;
  for (int64_t c : chunks_ms) r.chunk_ns.push_back(c * kMs);
  r.first_token_ns = r.chunk_ns.front();
  r.last_token_ns = r.chunk_ns.back();
  r.server_completion_tokens = tokens;
  r.prompt_tokens = 10;
  r.http_status = 200;
  r.success = true;
  r.generated_text = "text " + std::to_string(index);
  return r;
}

// Completion order (2, 0, 1, warmup): the JSON lays requests out by index.
std::vector<RequestRecord> records() {
  std::vector<RequestRecord> rs;
  RequestRecord f;
  f.index = 2;
  f.intended_ns = 20 * kMs;
  f.sent_ns = 30 * kMs;
  f.http_status = 503;
  f.prompt_tokens = 12;
  f.error = "HTTP 503: overloaded (Authorization: Bearer sk-abcdefghijklmnopqrstuv)";
  rs.push_back(f);
  rs.push_back(ok(0, 0, {100, 120, 150}, 3));
  RequestRecord cut = ok(1, 10, {200, 250}, 2);
  cut.generated_text = "caf\xC3";  // a multi-byte character cut by the server
  rs.push_back(cut);
  RequestRecord warm = ok(9, 0, {5}, 1);
  warm.warmup = true;
  rs.push_back(warm);
  return rs;
}

RunInfo info() {
  RunInfo i;
  i.backend = "openai-chat";
  i.label = "mps";
  i.model_id = "meta-llama/Llama-3.1-8B-Instruct";
  i.tokenizer_id = "word";
  i.num_prompts = 3;
  i.request_rate = INFINITY;
  i.max_concurrency = 0;
  i.date = "20260101-120000";
  i.metadata = {{"gpu", "H100"}, {"tp", "1"}, {"duration", "overridden by vLLM's own key"}};
  i.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  return i;
}

json make(bool detailed, metrics::Options o = {}) {
  auto rs = records();
  o.percentiles = {50, 99.9};
  metrics::Summary s = metrics::compute(rs, 2.0, o);
  RunInfo i = info();
  i.goodput_slo_ms = o.goodput_slo_ms;
  return vllm_result_json(s, i, rs, detailed);
}

TEST(VllmResultJson, HasVllmKeysWithVllmTypes) {
  json j = make(false);
  EXPECT_EQ(j["date"], "20260101-120000");
  EXPECT_EQ(j["endpoint_type"], "openai-chat");
  EXPECT_EQ(j["backend"], "openai-chat");
  EXPECT_EQ(j["label"], "mps");
  EXPECT_EQ(j["model_id"], "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(j["tokenizer_id"], "word");
  EXPECT_EQ(j["num_prompts"], 3);
  EXPECT_EQ(j["request_rate"], "inf");
  EXPECT_EQ(j["burstiness"], 1.0);
  EXPECT_TRUE(j["max_concurrency"].is_null());
  EXPECT_EQ(j["gpu"], "H100");  // metadata at top level
  EXPECT_EQ(j["tp"], "1");
  EXPECT_TRUE(j["duration"].is_number_float());  // vLLM's key wins over metadata
  EXPECT_DOUBLE_EQ(j["duration"].get<double>(), 2.0);
  EXPECT_EQ(j["completed"], 2);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["total_input_tokens"], 20);
  EXPECT_EQ(j["total_output_tokens"], 5);
  EXPECT_DOUBLE_EQ(j["request_throughput"].get<double>(), 1.0);
  EXPECT_TRUE(j["request_goodput"].is_null());  // no --goodput
  EXPECT_DOUBLE_EQ(j["output_throughput"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(j["total_token_throughput"].get<double>(), 12.5);
  EXPECT_TRUE(j["max_output_tokens_per_s"].is_number());
  EXPECT_TRUE(j["max_concurrent_requests"].is_number_integer());
  EXPECT_EQ(j["max_concurrent_requests"], 2);
  EXPECT_EQ(j["rtfx"], 0.0);
  // Aggregates in ms, for the selected metrics, with vLLM's p<word> names.
  // TTFT {100, 190}; E2EL {150, 240}.
  EXPECT_DOUBLE_EQ(j["mean_ttft_ms"].get<double>(), 145);
  EXPECT_DOUBLE_EQ(j["median_ttft_ms"].get<double>(), 145);
  EXPECT_DOUBLE_EQ(j["std_ttft_ms"].get<double>(), 45);
  EXPECT_DOUBLE_EQ(j["p50_ttft_ms"].get<double>(), 145);
  EXPECT_NEAR(j["p99.9_ttft_ms"].get<double>(), 189.91, 1e-9);
  for (const char* k :
       {"mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p50_tpot_ms", "p99.9_tpot_ms",
        "mean_itl_ms", "p99.9_itl_ms", "mean_e2el_ms", "p50_e2el_ms"}) {
    EXPECT_TRUE(j.contains(k) && j[k].is_number()) << k;
  }
  EXPECT_DOUBLE_EQ(j["mean_e2el_ms"].get<double>(), 195);
  EXPECT_FALSE(j.contains("mean_client_queue_time_ms"));
  // vLLM keeps latencies and queue_times even without --save-detailed; the rest go.
  EXPECT_EQ(j["latencies"].size(), 3u);
  EXPECT_EQ(j["queue_times"].size(), 3u);
  for (const char* k :
       {"input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors"}) {
    EXPECT_FALSE(j.contains(k)) << k;
  }
}

TEST(VllmResultJson, DetailedArraysInPlanOrderAndSeconds) {
  json j = make(true);
  for (const char* k : {"input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times",
                        "queue_times", "generated_texts", "errors"}) {
    ASSERT_TRUE(j[k].is_array()) << k;
    EXPECT_EQ(j[k].size(), 3u) << k;  // the warmup is left out
  }
  EXPECT_EQ(j["input_lens"], json({10, 10, 12}));
  EXPECT_EQ(j["output_lens"], json({3, 2, 0}));  // 0 for the failure, as vLLM
  EXPECT_DOUBLE_EQ(j["ttfts"][0].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["ttfts"][1].get<double>(), 0.19);
  EXPECT_EQ(j["ttfts"][2], 0.0);
  ASSERT_EQ(j["itls"][0].size(), 2u);  // seconds, a list per request
  EXPECT_DOUBLE_EQ(j["itls"][0][0].get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j["itls"][0][1].get<double>(), 0.03);
  EXPECT_TRUE(j["itls"][2].empty());
  EXPECT_DOUBLE_EQ(j["latencies"][0].get<double>(), 0.15);
  EXPECT_EQ(j["latencies"][2], 0.0);
  EXPECT_DOUBLE_EQ(j["start_times"][1].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(j["queue_times"][2].get<double>(), 0.01);  // sent 10 ms after intended
  EXPECT_EQ(j["generated_texts"][0], "text 0");
  EXPECT_EQ(j["generated_texts"][1], "caf\xEF\xBF\xBD");  // the cut byte became U+FFFD
  EXPECT_EQ(j["errors"][0], "");
  const std::string error = j["errors"][2].get<std::string>();
  EXPECT_NE(error.find("HTTP 503"), std::string::npos);
  EXPECT_EQ(error.find("sk-abcdefghijklmnopqrstuv"), std::string::npos);  // redacted
  EXPECT_EQ(j["servebench"]["failure_reasons"], json({"", "", "http_503"}));
  EXPECT_EQ(j["servebench"]["intended_times_s"].size(), 3u);
}

TEST(VllmResultJson, GoodputAndQueueMetricsWhenAsked) {
  metrics::Options o;
  o.goodput_slo_ms = {{"ttft", 150}};
  auto rs = records();
  o.percentiles = {99};
  metrics::Summary s = metrics::compute(rs, 2.0, o);
  RunInfo i = info();
  i.goodput_slo_ms = o.goodput_slo_ms;
  i.max_concurrency = 8;
  i.request_rate = 5;
  i.label.clear();
  i.percentile_metrics = {"e2el", "client_queue_time", "e2el_including_client_queue"};
  json j = vllm_result_json(s, i, rs, false);
  EXPECT_DOUBLE_EQ(j["request_goodput"].get<double>(), 0.5);  // only TTFT 100 <= 150
  EXPECT_EQ(j["max_concurrency"], 8);
  EXPECT_EQ(j["request_rate"], 5.0);
  EXPECT_TRUE(j["label"].is_null());
  EXPECT_FALSE(j.contains("mean_ttft_ms"));  // not selected
  EXPECT_TRUE(j.contains("p99_e2el_ms"));
  EXPECT_DOUBLE_EQ(j["mean_client_queue_time_ms"].get<double>(), 0);
  EXPECT_TRUE(j.contains("p99_e2el_including_client_queue_ms"));
}

TEST(VllmResultJson, RampUpKeysAndRpsChangeEventsOnlyWithARampUp) {
  json plain = make(false);
  for (const char* k :
       {"ramp_up_strategy", "ramp_up_start_rps", "ramp_up_end_rps", "rps_change_events"}) {
    EXPECT_FALSE(plain.contains(k)) << k;
  }
  auto rs = records();
  metrics::Summary s = metrics::compute(rs, 2.0, {});
  RunInfo i = info();
  i.ramp_up_strategy = "exponential";
  i.ramp_up_start_rps = 2;
  i.ramp_up_end_rps = 4;
  i.rps_change_events = {
      {2, "2026-01-01T12:00:00.000100"}, {3, "2026-01-01T12:00:01"}, {4, "2026-01-01T12:00:02.5"}};
  json j = vllm_result_json(s, i, rs, false);
  EXPECT_EQ(j["ramp_up_strategy"], "exponential");
  EXPECT_TRUE(j["ramp_up_start_rps"].is_number_integer());  // ints, as vLLM's flags
  EXPECT_EQ(j["ramp_up_start_rps"], 2);
  EXPECT_EQ(j["ramp_up_end_rps"], 4);
  EXPECT_EQ(j["request_rate"], "inf");
  EXPECT_EQ(j["rps_change_events"], json::parse(R"([
      {"rps": 2, "timestamp": "2026-01-01T12:00:00.000100"},
      {"rps": 3, "timestamp": "2026-01-01T12:00:01"},
      {"rps": 4, "timestamp": "2026-01-01T12:00:02.5"}])"));
}

TEST(VllmResultJson, SpecDecodeKeysOnlyWhenTheServerHadThem) {
  EXPECT_FALSE(make(false).contains("spec_decode_acceptance_rate"));
  auto rs = records();
  metrics::Summary s = metrics::compute(rs, 2.0, {});
  RunInfo i = info();
  i.spec_decode = test_support::example_spec_decode();
  json j = vllm_result_json(s, i, rs, false);
  EXPECT_EQ(j["spec_decode_acceptance_rate"], 62.5);
  EXPECT_EQ(j["spec_decode_acceptance_length"], 2.875);
  EXPECT_TRUE(j["spec_decode_num_drafts"].is_number_integer());  // int(), as vLLM writes them
  EXPECT_EQ(j["spec_decode_num_drafts"], 40);
  EXPECT_EQ(j["spec_decode_draft_tokens"], 120);
  EXPECT_EQ(j["spec_decode_accepted_tokens"], 75);
  // Fractions here, where the console shows percentages (as in vLLM).
  EXPECT_EQ(j["spec_decode_per_position_acceptance_rates"], json::parse("[0.9, 0.625, 0.35]"));
}

TEST(VllmResultJson, ProbeKeysOnlyWithProbes) {
  EXPECT_FALSE(make(false).contains("probe_completed"));
  auto rs = records();
  metrics::Summary s = metrics::compute(rs, 2.0, {});
  RunInfo i = info();
  i.probes = ProbeStats{.completed = 12,
                        .failed = 1,
                        .median_e2el_ms = 50.125,
                        .p99_e2el_ms = 61.5,
                        .max_e2el_ms = 62.0};
  json j = vllm_result_json(s, i, rs, false);
  EXPECT_EQ(j["probe_completed"], 12);
  EXPECT_EQ(j["probe_failed"], 1);
  EXPECT_EQ(j["probe_median_e2el_ms"], 50.125);
  EXPECT_EQ(j["probe_p99_e2el_ms"], 61.5);
  EXPECT_EQ(j["probe_max_e2el_ms"], 62.0);
}

TEST(VllmResultJson, ServebenchExtrasUnderTheirOwnKey) {
  json j = make(false);
  const json& sb = j["servebench"];
  EXPECT_EQ(sb["requests_sent"], 3);
  EXPECT_EQ(sb["warmup_requests_ignored"], 1);
  EXPECT_EQ(sb["requested_rate_rps"], "inf");
  for (const char* k :
       {"schedule_lag_ms", "ttft_from_intended_ms", "e2el_from_intended_ms", "itl_per_token_ms"}) {
    ASSERT_TRUE(sb[k].is_object()) << k;
    for (const char* f : {"count", "mean", "median", "std", "min", "max", "p50", "p99.9"}) {
      EXPECT_TRUE(sb[k].contains(f)) << k << "." << f;
    }
  }
  EXPECT_EQ(sb["schedule_lag_ms"]["count"], 3);
  EXPECT_DOUBLE_EQ(sb["schedule_lag_ms"]["max"].get<double>(), 10);
  EXPECT_EQ(sb["failures_by_reason"], json({{"http_503", 1}}));
  EXPECT_FALSE(sb.contains("client"));
  EXPECT_FALSE(sb.contains("failure_reasons"));  // detailed only
}

TEST(VllmResultJson, RoundTripsThroughText) {
  json j = make(true);
  const std::string text = j.dump();
  json back = json::parse(text);
  EXPECT_EQ(back, j);
  EXPECT_EQ(back["itls"][1][0].get<double>(), j["itls"][1][0].get<double>());
}

TEST(VllmResultJson, ZeroCompletedStillWritesEveryKey) {
  std::vector<RequestRecord> rs(2);
  rs[0].index = 0;
  rs[1].index = 1;
  rs[1].sent_ns = 0;
  rs[1].error = "Couldn't connect to server";
  metrics::Summary s = metrics::compute(rs, 0.5, {});
  json j = vllm_result_json(s, info(), rs, true);
  EXPECT_EQ(j["completed"], 0);
  EXPECT_EQ(j["failed"], 2);
  EXPECT_EQ(j["mean_ttft_ms"], 0.0);
  EXPECT_EQ(j["p99_itl_ms"], 0.0);
  EXPECT_EQ(j["max_concurrent_requests"], 0);
  EXPECT_EQ(j["servebench"]["failures_by_reason"], json({{"connection", 1}, {"not_sent", 1}}));
  EXPECT_NO_THROW((void)j.dump());
}

// Issue 19, defect 2: `--label $'lab\xe9'` (or a Latin-1 metadata value or server label) made
// dump() throw after the run and left a 0-byte result. Every such string is shown escaped.
TEST(VllmResultJson, InvalidUtf8IsShownEscapedAndNeverThrows) {
  std::vector<RequestRecord> rs(1);
  rs[0].index = 0;
  rs[0].error = "HTTP 500: caf\xe9";
  metrics::Summary s = metrics::compute(rs, 0.5, {});
  RunInfo i = info();
  i.label = "lab\xe9";
  i.metadata["site\xe9"] = "Z\xfcrich";
  json j = vllm_result_json(s, i, rs, true);
  EXPECT_EQ(j["label"], "lab\\xE9");
  EXPECT_EQ(j["site\\xE9"], "Z\\xFCrich");
  EXPECT_EQ(j["errors"][0], "HTTP 500: caf\\xE9");
  // Anything added afterwards (the run adds server metrics, arguments) is made valid again.
  j["servebench"]["server_metrics"] = {{"labels", {{"model_name", "m\xe9"}}}};
  EXPECT_THROW((void)j.dump(), json::type_error);
  make_valid_utf8(j);
  std::string text;
  EXPECT_NO_THROW(text = j.dump());
  EXPECT_EQ(json::parse(text)["servebench"]["server_metrics"]["labels"]["model_name"], "m\\xE9");
}

TEST(PytorchBenchmarkRecords, OneRecordPerPresentAggregate) {
  json result = make(false);
  json args = {{"model", "m"}, {"num_prompts", 3}};
  json records = pytorch_benchmark_records(result, args, "m");
  ASSERT_EQ(records.size(), 9u);  // 12 names, but p99_* are absent (percentiles 50, 99.9)
  const json& first = records[0];
  EXPECT_EQ(first["benchmark"]["name"], "vLLM benchmark");
  EXPECT_EQ(first["benchmark"]["extra_info"]["args"]["num_prompts"], 3);
  EXPECT_EQ(first["model"]["name"], "m");
  EXPECT_EQ(first["metric"]["name"], "median_ttft_ms");
  EXPECT_EQ(first["metric"]["benchmark_values"], json::array({result["median_ttft_ms"]}));
  EXPECT_FALSE(first["metric"]["extra_info"].contains("mean_ttft_ms"));
  EXPECT_TRUE(first["metric"]["extra_info"].contains("completed"));
  EXPECT_TRUE(pytorch_benchmark_records(json::object(), args, "m").empty());
}

}  // namespace
}  // namespace servebench::report
