// /metrics: vLLM's names, and counters that move with the requests served.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "sim/server_test_client.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

TEST_F(SimServerTest, MetricsUseVllmNamesAndCountersMove) {
  RawClient c(port_);
  Response before = c.request("GET", "/metrics");
  ASSERT_EQ(before.status, 200);
  for (const char* name :
       {"vllm:num_requests_running{", "vllm:num_requests_waiting{", "vllm:kv_cache_usage_perc{",
        "vllm:prompt_tokens_total{", "vllm:generation_tokens_total{", "vllm:num_preemptions_total{",
        "vllm:time_to_first_token_seconds_bucket{", "vllm:inter_token_latency_seconds_bucket{",
        "servebench_sim:emission_lag_seconds_bucket{",
        "servebench_sim:emission_lag_max_seconds{"}) {
    EXPECT_NE(before.body.find(name), std::string::npos) << name;
  }
  EXPECT_EQ(metric(before.body, "vllm:generation_tokens_total"), 0);
  ASSERT_EQ(c.request("POST", "/v1/completions", completion_body(5, true)).status, 200);
  ASSERT_EQ(c.request("POST", "/v1/completions", completion_body(4, false)).status, 200);
  Response after = c.request("GET", "/metrics");
  EXPECT_EQ(metric(after.body, "vllm:generation_tokens_total"), 9);
  EXPECT_EQ(metric(after.body, "vllm:prompt_tokens_total"), 8);
  EXPECT_EQ(metric(after.body, "vllm:time_to_first_token_seconds_count"), 2);
  EXPECT_EQ(metric(after.body, "vllm:inter_token_latency_seconds_count"), 7);
  EXPECT_EQ(metric(after.body, "servebench_sim:emission_lag_seconds_count"), 9);
  EXPECT_EQ(metric(after.body, "vllm:num_requests_running"), 0);
  EXPECT_NE(after.body.find("vllm:request_success_total{engine=\"0\",model_name=\"sim-model\","
                            "finished_reason=\"length\"} 2"),
            std::string::npos);
}

}  // namespace
}  // namespace servebench::sim
