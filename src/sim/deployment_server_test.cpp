// A deployment served over loopback: every frontend at its own port, tokens streamed (several
// per event under speculative decoding), per-worker /metrics, the simulated DCGM exporter, the
// trace's worker fields, and a deployment that cannot run refused in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"
#include "sim/server_test_client.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

// Short steps so that the tests run fast: one speculative worker behind frontend alpha; a
// prefill worker on node0 and a decode worker on node1 behind frontend beta (KV over IB).
constexpr const char* kDeployment = R"(name: wire-test
model: Llama-3.1-8B
nodes:
  - {name: node, count: 2, gpu: H100, gpus: 2, network: infiniband}
workers:
  - name: spec
    nodes: [node0]
    overheads: {step_us: 2000, per_seq_us: 10}
    speculative: {draft_tokens: 3, acceptance_rate: 0.9}
  - name: prefill
    nodes: [node0]
    overheads: {step_us: 2000, per_seq_us: 10}
  - name: decode
    nodes: [node1]
    overheads: {step_us: 2000, per_seq_us: 10}
routers:
  - {name: ra, workers: [spec]}
  - {name: rb, prefill: [prefill], decode: [decode], kv_link: infiniband}
frontends:
  - {name: alpha, router: ra}
  - {name: beta, router: rb}
)";

std::string write_temp(const std::string& name, const std::string& text) {
  auto path =
      std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

uint16_t port_of(const std::string& url) {
  return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
}

// Sum of every sample of `name` whose labels contain `label` ("" = any).
double metric_sum(const std::string& text, const std::string& name, const std::string& label = "") {
  double total = 0;
  bool seen = false;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + "{", 0) != 0) continue;
    const size_t close = line.find('}');
    if (!label.empty() && line.substr(0, close).find(label) == std::string::npos) continue;
    total += std::stod(line.substr(close + 2));
    seen = true;
  }
  return seen ? total : -1;
}

int count_samples(const std::string& text, const std::string& name) {
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) n += line.rfind(name + "{", 0) == 0;
  return n;
}

// The trace's lines by request id; removes the file.
std::map<std::string, json> trace_lines(const std::string& path) {
  std::map<std::string, json> lines;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line);
      lines[j["request_id"]] = j;
    }
  }
  std::filesystem::remove(path);
  return lines;
}

Options deployment_options() {
  Options o = fast_options();
  o.threads = 2;
  return o;
}

std::string stream_body(int max_tokens) {
  return completion_body(
      max_tokens, true,
      R"(,"stream_options":{"include_usage":true,"continuous_usage_stats":true})");
}

class DeploymentServerTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = write_temp("sim-deployment", kDeployment); }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(DeploymentServerTest, EveryFrontendIsServedAtItsOwnPortAndStreams) {
  DeploymentServer server(deployment_options(), path_, 0);
  server.start();
  ASSERT_EQ(server.frontend_count(), 2u);
  EXPECT_EQ(server.frontend_name(0), "alpha");
  EXPECT_EQ(server.frontend_name(1), "beta");
  const auto urls = server.urls();
  ASSERT_EQ(urls.size(), 2u);
  EXPECT_NE(urls[0], urls[1]);
  EXPECT_NE(server.file_text().find("name: wire-test"), std::string::npos);
  for (const std::string& url : urls) {
    RawClient c(port_of(url));
    Response r = c.request("POST", "/v1/completions", stream_body(40));
    ASSERT_EQ(r.status, 200) << url;
    ASSERT_TRUE(r.complete) << url;
    auto events = r.events();
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events.back(), "[DONE]");
    json usage = json::parse(events[events.size() - 2]);
    EXPECT_EQ(usage["usage"]["completion_tokens"], 40) << url;
  }
}

TEST_F(DeploymentServerTest, SpeculativeStepsReachTheClientAsEventsOfSeveralTokens) {
  DeploymentServer server(deployment_options(), path_, 0);
  server.start();
  RawClient c(server.port(0));
  Response r = c.request("POST", "/v1/completions", stream_body(200));
  ASSERT_TRUE(r.complete);
  auto events = r.events();
  int previous = 0, multi = 0, token_events = 0;
  std::string text;
  for (const std::string& ev : events) {
    if (ev == "[DONE]") break;
    json j = json::parse(ev);
    if (j["choices"].empty()) continue;  // the final usage event
    const int now = j["usage"]["completion_tokens"];
    EXPECT_GE(now - previous, 1);
    EXPECT_LE(now - previous, 4);  // 1 + up to 3 accepted drafts
    multi += now - previous > 1;
    ++token_events;
    previous = now;
    text += j["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(previous, 200);
  EXPECT_EQ(tokenizer::make_word_tokenizer()->count(text), 200u);
  // 90 % acceptance per position: most steps yield several tokens.
  EXPECT_GT(multi, token_events / 2);
  EXPECT_LT(token_events, 120);
}

TEST_F(DeploymentServerTest, MetricsArePerWorkerAndDcgmSeriesMove) {
  DeploymentServer server(deployment_options(), path_, 0);
  server.start();
  const uint16_t alpha = server.port(0), beta = server.port(1);
  RawClient ca(alpha), cb(beta);
  Response dcgm0 = ca.request("GET", "/dcgm/metrics");
  ASSERT_EQ(dcgm0.status, 200);
  ASSERT_TRUE(ca.request("POST", "/v1/completions", stream_body(100)).complete);
  ASSERT_TRUE(cb.request("POST", "/v1/completions", stream_body(100)).complete);

  const std::string ma = ca.request("GET", "/metrics").body;
  EXPECT_EQ(metric_sum(ma, "dynamo_frontend_requests_total", "status=\"success\""), 1);
  EXPECT_EQ(metric_sum(ma, "dynamo_frontend_output_tokens_total"), 100);
  EXPECT_GT(metric_sum(ma, "dynamo_frontend_time_to_first_token_seconds_count"), 0);
  EXPECT_EQ(metric_sum(ma, "vllm:generation_tokens_total", "worker=\"spec\""), 100);
  EXPECT_EQ(metric_sum(ma, "vllm:generation_tokens_total", "worker=\"decode\""), -1);
  EXPECT_GT(metric_sum(ma, "vllm:spec_decode_num_drafts_total", "worker=\"spec\""), 0);
  EXPECT_GT(metric_sum(ma, "vllm:spec_decode_num_accepted_tokens_per_pos_total", "position=\"2\""),
            0);
  EXPECT_GT(metric_sum(ma, "servebench_sim:worker_busy_seconds_total", "worker=\"spec\""), 0);
  EXPECT_EQ(metric_sum(ma, "vllm:num_requests_running"), 0);
  EXPECT_GE(metric_sum(ma, "vllm:kv_cache_usage_perc"), 0);

  const std::string mb = cb.request("GET", "/metrics").body;
  // The decode worker samples the client's 100 tokens; the prefill worker its own one.
  EXPECT_EQ(metric_sum(mb, "vllm:generation_tokens_total", "worker=\"decode\""), 100);
  EXPECT_EQ(metric_sum(mb, "vllm:generation_tokens_total", "worker=\"prefill\""), 1);
  EXPECT_GT(metric_sum(mb, "vllm:prompt_tokens_total", "worker=\"prefill\""), 0);

  const std::string d1 = ca.request("GET", "/dcgm/metrics").body;
  EXPECT_EQ(count_samples(d1, "DCGM_FI_DEV_GPU_UTIL"), 4);  // two nodes of two GPUs
  EXPECT_GT(metric_sum(d1, "DCGM_FI_DEV_GPU_UTIL"), 0);
  EXPECT_GT(metric_sum(d1, "DCGM_FI_PROF_SM_ACTIVE"), 0);
  // 8B bf16 weights per GPU: ~15 GiB on each of the three used GPUs; the fourth holds none.
  EXPECT_GT(metric_sum(d1, "DCGM_FI_DEV_FB_USED"), 3 * 14000);
  EXPECT_GT(metric_sum(d1, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
            metric_sum(dcgm0.body, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"));
  EXPECT_GT(metric_sum(d1, "DCGM_FI_DEV_POWER_USAGE"), 4 * 70 - 1);
  // The KV cache crossed from node0 to node1 over the scale-out link.
  EXPECT_GT(
      metric_sum(d1, "node_infiniband_port_data_transmitted_bytes_total", "Hostname=\"node0\""), 0);
  EXPECT_GT(metric_sum(d1, "node_infiniband_port_data_received_bytes_total", "Hostname=\"node1\""),
            0);
  EXPECT_NE(d1.find("UUID=\"GPU-"), std::string::npos);
}

TEST_F(DeploymentServerTest, TraceLinesNameTheWorkersAndTheKvTransfer) {
  const std::string trace = (std::filesystem::temp_directory_path() /
                             ("sim-deployment-trace-" + std::to_string(::getpid()) + ".jsonl"))
                                .string();
  {
    Options o = deployment_options();
    o.trace_out = trace;
    DeploymentServer server(o, path_, 0);
    server.start();
    RawClient ca(server.port(0)), cb(server.port(1));
    ASSERT_TRUE(
        ca.request("POST", "/v1/completions", stream_body(10), "x-request-id: a1\r\n").complete);
    ASSERT_TRUE(
        cb.request("POST", "/v1/completions", stream_body(10), "x-request-id: b1\r\n").complete);
    server.stop();
  }
  std::map<std::string, json> lines = trace_lines(trace);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines["a1"]["frontend"], "alpha");
  EXPECT_EQ(lines["a1"]["worker"], "spec");
  EXPECT_EQ(lines["a1"]["replica"], 0);
  EXPECT_FALSE(lines["a1"].contains("prefill_worker"));
  EXPECT_EQ(lines["b1"]["frontend"], "beta");
  EXPECT_EQ(lines["b1"]["worker"], "decode");
  EXPECT_EQ(lines["b1"]["prefill_worker"], "prefill");
  EXPECT_GT(lines["b1"]["kv_transfer_bytes"].get<int64_t>(), 0);
  EXPECT_GT(lines["b1"]["kv_transfer_end_ns"].get<int64_t>(),
            lines["b1"]["kv_transfer_start_ns"].get<int64_t>());
  EXPECT_EQ(lines["b1"]["due_ns"].size(), 10u);
}

TEST(DeploymentServerRouting, AChatSharingASystemPromptGoesBackToTheReplicaThatCachedIt) {
  const std::string path = write_temp("sim-deployment-kv", R"(name: kv
model: Llama-3.1-8B
gpu: H100
gpus_per_node: 4
workers:
  - {name: w, replicas: 4, overheads: {step_us: 1000, per_seq_us: 10}}
routers:
  - {name: kv, policy: kv_aware, workers: [w]}
)");
  const std::string trace = path + ".trace.jsonl";
  {
    Options o = deployment_options();
    o.trace_out = trace;
    DeploymentServer server(o, path, 0);
    server.start();
    RawClient c(server.port(0));
    std::string system(400, 'x');
    for (size_t i = 3; i < system.size(); i += 4) system[i] = ' ';  // ~100 words
    for (int i = 0; i < 3; ++i) {
      const std::string body =
          R"({"model":"sim-model","max_tokens":2,"messages":[{"role":"system","content":")" +
          system + R"("},{"role":"user","content":"question )" + std::to_string(i) + R"("}]})";
      ASSERT_EQ(c.request("POST", "/v1/chat/completions", body,
                          "x-request-id: q" + std::to_string(i) + "\r\n")
                    .status,
                200);
    }
    server.stop();
  }
  std::map<std::string, json> lines = trace_lines(trace);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines["q0"]["cached_prompt_tokens"], 0);
  for (const char* id : {"q1", "q2"}) {
    EXPECT_EQ(lines[id]["replica"], lines["q0"]["replica"]) << id;
    // The system prompt's tokens: all but the user message's.
    EXPECT_GE(lines[id]["cached_prompt_tokens"].get<int>(), 100) << id;
    EXPECT_LT(lines[id]["cached_prompt_tokens"].get<int>(), lines[id]["prompt_tokens"].get<int>())
        << id;
  }
}

TEST_F(DeploymentServerTest, ADeploymentThatCannotRunIsRefusedInOneLineNamingFileAndKey) {
  std::string text = kDeployment;
  text.replace(text.find("  - name: prefill\n"), 18, "  - name: prefill\n    tp: 3\n");
  const std::string bad = write_temp("sim-deployment-bad", text);
  try {
    DeploymentServer server(deployment_options(), bad, 0);
    ADD_FAILURE() << "accepted";
  } catch (const core::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find(bad), std::string::npos) << what;
    EXPECT_NE(what.find("tp"), std::string::npos) << what;
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
  }
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace servebench::sim
