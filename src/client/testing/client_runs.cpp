#include "client/testing/client_runs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "core/clock.h"

namespace servebench::client::testing {

using record::RequestRecord;

const tokenizer::Tokenizer& word_tokenizer() {
  static const std::unique_ptr<tokenizer::Tokenizer> tokenizer = tokenizer::make_word_tokenizer();
  return *tokenizer;
}

double seconds_since(int64_t start_ns) {
  return static_cast<double>(core::mono_ns() - start_ns) * 1e-9;
}

bool asked_continuous_usage(const Request& request) {
  return request.body.find(R"("continuous_usage_stats":true)") != std::string::npos;
}

int request_index(const Request& request) {
  std::string id = request.header("x-request-id");
  return id.rfind("req-", 0) == 0 ? std::stoi(id.substr(4)) : -1;
}

std::string usage_json(int completion_tokens) {
  return R"({"prompt_tokens":)" + std::to_string(kPromptTokens) + R"(,"total_tokens":)" +
         std::to_string(kPromptTokens + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + "}";
}

std::vector<std::string> completion_events(const Request& request, int tokens, bool usage) {
  bool continuous = usage && asked_continuous_usage(request);
  std::vector<std::string> events;
  for (int i = 1; i <= tokens; ++i) {
    std::string event = R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m",)"
                        R"("choices":[{"index":0,"text":" w)" +
                        std::to_string(i) + R"(","logprobs":null,"finish_reason":)" +
                        (i == tokens ? "\"length\"" : "null") + "}]";
    if (continuous) event += R"(,"usage":)" + usage_json(i);
    events.push_back(event + "}");
  }
  if (usage)
    events.push_back(R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m",)"
                     R"("choices":[],"usage":)" +
                     usage_json(tokens) + "}");
  events.push_back("[DONE]");
  return events;
}

std::string expected_text(int tokens) {
  std::string text;
  for (int i = 1; i <= tokens; ++i) text += " w" + std::to_string(i);
  return text;
}

std::string openai_error(const std::string& message) {
  return R"({"error":{"message":")" + message +
         R"(","type":"BadRequestError","param":null,"code":null}})";
}

Endpoint endpoint_for(const ScriptServer& server) {
  Endpoint endpoint;
  endpoint.url = server.url("/v1/completions");
  endpoint.model = "test-model";
  endpoint.timeout_s = 30;
  return endpoint;
}

BodyOptions body_options() {
  BodyOptions body;
  body.request_id_prefix = "req-";
  return body;
}

std::vector<PlannedRequest> make_plan(int count, int32_t max_tokens, int64_t spacing_ns) {
  std::vector<PlannedRequest> plan;
  for (int i = 0; i < count; ++i) {
    PlannedRequest request;
    request.index = static_cast<uint64_t>(i);
    request.intended_ns = i * spacing_ns;
    request.prompt = "prompt number " + std::to_string(i);
    request.prompt_tokens = 3;
    request.max_tokens = max_tokens;
    plan.push_back(request);
  }
  return plan;
}

HttpEngine current_engine = HttpEngine::kCurl;

void ClientRun::SetUp() {
  current_engine = GetParam();
}

std::string engine_name(const ::testing::TestParamInfo<HttpEngine>& info) {
  return info.param == HttpEngine::kCurl ? "curl" : "http1";
}

RunResult run_plan(const Endpoint& endpoint, const BodyOptions& body,
                   const std::vector<PlannedRequest>& plan, const RunOptions& given,
                   const std::function<void(const RequestRecord&)>& on_record) {
  RunOptions options = given;
  options.http_engine = current_engine;
  RunResult result;
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> in_sink{0};
  result.stats = run(endpoint, body, plan, options, word_tokenizer(), [&](RequestRecord&& r) {
    int at_once = ++in_sink;
    result.sink_calls_at_once = std::max(result.sink_calls_at_once, at_once);
    if (std::this_thread::get_id() == caller) result.sink_on_caller_thread = true;
    if (sched_getscheduler(0) == SCHED_IDLE ||
        getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())) == 19)
      ++result.sink_calls_yielding;
    --in_sink;
    if (on_record) on_record(r);
    result.records.push_back(std::move(r));
  });
  return result;
}

void expect_one_record_each(const RunResult& result, size_t plan_size) {
  ASSERT_EQ(result.records.size(), plan_size);
  std::vector<uint64_t> indices;
  for (const RequestRecord& r : result.records) indices.push_back(r.index);
  std::sort(indices.begin(), indices.end());
  for (size_t i = 0; i < plan_size; ++i) EXPECT_EQ(indices[i], i);
}

int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

}  // namespace servebench::client::testing
