// The simulator over real loopback sockets, with a small raw HTTP/1.1 client (so that chunk
// boundaries, headers and closes are seen exactly as sent).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/error.h"
#include "sim/sim.h"
#include "tokenizer/tokenizer.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lowercase names
  std::string body;                            // de-chunked
  std::vector<std::string> chunks;             // each HTTP chunk's data (chunked bodies)
  std::vector<int64_t> chunk_ns;               // when each chunk was complete
  bool complete = false;                       // body ended as HTTP says
  bool closed = false;                         // the server closed (or reset) the socket
  bool reset = false;                          // ECONNRESET seen

  // SSE events (`data: ` payloads) of a streamed body.
  std::vector<std::string> events() const {
    std::vector<std::string> out;
    size_t pos = 0;
    while (true) {
      size_t end = body.find("\n\n", pos);
      if (end == std::string::npos) break;
      std::string ev = body.substr(pos, end - pos);
      if (ev.rfind("data: ", 0) == 0) out.push_back(ev.substr(6));
      pos = end + 2;
    }
    return out;
  }
};

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ADD_FAILURE() << "connect failed";
    }
  }
  ~RawClient() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void send_raw(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  void send_request(const std::string& method, const std::string& path, const std::string& body,
                    const std::string& extra_headers = "") {
    std::string r = method + " " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") {
      r += "content-type: application/json\r\ncontent-length: " + std::to_string(body.size()) +
           "\r\n";
    }
    r += "\r\n" + body;
    send_raw(r);
  }
  Response request(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& extra_headers = "") {
    send_request(method, path, body, extra_headers);
    return read_response();
  }

  // Reads one response; stops after `max_chunks` chunks when given (to drop mid-stream).
  Response read_response(size_t max_chunks = SIZE_MAX) {
    Response r;
    std::string line;
    if (!read_line(line, r)) return r;
    r.status = std::atoi(line.substr(9, 3).c_str());
    while (read_line(line, r) && !line.empty()) {
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value[0] == ' ') value.erase(0, 1);
      r.headers[name] = value;
    }
    if (r.headers.count("transfer-encoding")) {
      while (r.chunks.size() < max_chunks) {
        if (!read_line(line, r)) return r;
        size_t n = std::stoul(line, nullptr, 16);
        if (n == 0) {
          read_line(line, r);
          r.complete = true;
          return r;
        }
        if (!need(n + 2, r)) return r;
        r.chunks.push_back(buf_.substr(0, n));
        r.chunk_ns.push_back(core::mono_ns());
        r.body += r.chunks.back();
        EXPECT_EQ(buf_.substr(n, 2), "\r\n");
        buf_.erase(0, n + 2);
      }
      return r;
    }
    size_t len = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    if (!need(len, r)) {
      r.body = buf_;
      buf_.clear();
      return r;
    }
    r.body = buf_.substr(0, len);
    buf_.erase(0, len);
    r.complete = true;
    return r;
  }

  // True when the server closed the connection within the timeout.
  bool closed_by_server(int timeout_ms = 2000) {
    Response r;
    return !fill(r, timeout_ms) && r.closed;
  }

 private:
  bool fill(Response& r, int timeout_ms = 10000) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      r.closed = true;
      r.reset = n < 0 && errno == ECONNRESET;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  bool need(size_t n, Response& r) {
    while (buf_.size() < n) {
      if (!fill(r)) return false;
    }
    return true;
  }
  bool read_line(std::string& line, Response& r) {
    for (;;) {
      size_t pos = buf_.find("\r\n");
      if (pos != std::string::npos) {
        line = buf_.substr(0, pos);
        buf_.erase(0, pos + 2);
        return true;
      }
      if (!fill(r)) return false;
    }
  }
  int fd_ = -1;
  std::string buf_;
};

Options fast_options() {
  Options o;
  o.port = 0;
  o.served_model_name = "sim-model";
  o.fixed.ttft = {5, 0};
  o.fixed.itl = {1, 0};
  o.seed = 7;
  o.max_model_len = 1000;
  return o;
}

std::string completion_body(int max_tokens, bool stream, const std::string& extra = "") {
  return R"({"model":"sim-model","prompt":"one two three four","max_tokens":)" +
         std::to_string(max_tokens) + R"(,"ignore_eos":true,"stream":)" +
         (stream ? "true" : "false") + extra + "}";
}

class SimServerTest : public ::testing::Test {
 protected:
  void start(Options o) {
    server_ = std::make_unique<Server>(std::move(o));
    server_->start();
    port_ = server_->port();
  }
  void SetUp() override { start(fast_options()); }
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
  std::unique_ptr<tokenizer::Tokenizer> tok_ = tokenizer::make_word_tokenizer();
};

double metric(const std::string& text, const std::string& sample_prefix) {
  size_t pos = text.find("\n" + sample_prefix);
  if (pos == std::string::npos) return -1;
  size_t sp = text.find(' ', text.find('}', pos));
  return std::stod(text.substr(sp + 1, text.find('\n', sp) - sp - 1));
}

TEST_F(SimServerTest, CompletionStreamIsFramedAsVllmAndUvicornSendIt) {
  RawClient c(port_);
  Response r = c.request("POST", "/v1/completions",
                         completion_body(5, true, R"(,"stream_options":{"include_usage":true})"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/event-stream; charset=utf-8");
  EXPECT_EQ(r.headers["transfer-encoding"], "chunked");
  ASSERT_TRUE(r.complete);
  // 5 tokens + usage + [DONE], each its own HTTP chunk holding exactly one SSE event.
  ASSERT_EQ(r.chunks.size(), 7u);
  for (const std::string& ch : r.chunks) {
    EXPECT_EQ(ch.rfind("data: ", 0), 0u) << ch;
    EXPECT_EQ(ch.substr(ch.size() - 2), "\n\n") << ch;
    EXPECT_EQ(ch.find("\n\n"), ch.size() - 2) << ch;
  }
  EXPECT_EQ(r.chunks.back(), "data: [DONE]\n\n");
  auto events = r.events();
  ASSERT_EQ(events.size(), 7u);
  std::string text;
  for (int k = 0; k < 5; ++k) {
    json j = json::parse(events[k]);
    EXPECT_EQ(j["object"], "text_completion");
    EXPECT_EQ(j["model"], "sim-model");
    EXPECT_EQ(j["choices"][0]["index"], 0);
    EXPECT_TRUE(j["usage"].is_null());
    EXPECT_EQ(j["choices"][0]["finish_reason"], k == 4 ? json("length") : json(nullptr));
    EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
    text += j["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(tok_->count(text), 5u);
  json usage = json::parse(events[5]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
  EXPECT_EQ(usage["usage"]["total_tokens"], 9);
  EXPECT_EQ(events[6], "[DONE]");
}

TEST_F(SimServerTest, ChatStreamStartsWithRoleOnlyDeltaAndCarriesContinuousUsage) {
  RawClient c(port_);
  Response r =
      c.request("POST", "/v1/chat/completions",
                R"({"model":"sim-model","messages":[{"role":"user","content":"hi there you"}],)"
                R"("max_completion_tokens":3,"ignore_eos":true,"stream":true,)"
                R"("stream_options":{"include_usage":true,"continuous_usage_stats":true}})");
  ASSERT_EQ(r.status, 200);
  auto events = r.events();
  ASSERT_EQ(events.size(), 6u);  // role, 3 tokens, usage, [DONE]
  json role = json::parse(events[0]);
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"], json({{"role", "assistant"}, {"content", ""}}));
  EXPECT_EQ(role["usage"]["completion_tokens"], 0);
  for (int k = 1; k <= 3; ++k) {
    json j = json::parse(events[k]);
    EXPECT_FALSE(j["choices"][0]["delta"].contains("role"));
    EXPECT_EQ(j["usage"]["prompt_tokens"], 3);
    EXPECT_EQ(j["usage"]["completion_tokens"], k);
    EXPECT_EQ(j["usage"]["total_tokens"], 3 + k);
  }
  EXPECT_EQ(json::parse(events[3])["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(json::parse(events[4])["usage"]["completion_tokens"], 3);
  EXPECT_EQ(events[5], "[DONE]");
}

TEST_F(SimServerTest, NonStreamingBodiesCarryExactUsage) {
  RawClient c(port_);
  Response r = c.request("POST", "/v1/completions", completion_body(6, false));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "application/json");
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(tok_->count(j["choices"][0]["text"].get<std::string>()), 6u);
  EXPECT_EQ(j["usage"], json({{"prompt_tokens", 4},
                              {"total_tokens", 10},
                              {"completion_tokens", 6},
                              {"prompt_tokens_details", nullptr}}));
  // Keep-alive: a second request (chat) on the same connection.
  r = c.request("POST", "/v1/chat/completions",
                R"({"messages":[{"role":"user","content":"a b"}],"max_tokens":2,)"
                R"("ignore_eos":true})");
  ASSERT_EQ(r.status, 200);
  j = json::parse(r.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(tok_->count(j["choices"][0]["message"]["content"].get<std::string>()), 2u);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 2);
  EXPECT_EQ(j["usage"]["completion_tokens"], 2);
}

TEST_F(SimServerTest, DefaultMaxTokensForCompletionsIs16) {
  RawClient c(port_);
  Response r = c.request("POST", "/v1/completions", R"({"prompt":"x","ignore_eos":true})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 16);
}

TEST_F(SimServerTest, KeepAliveServesTwoStreamsOnOneConnection) {
  RawClient c(port_);
  for (int i = 0; i < 2; ++i) {
    Response r = c.request("POST", "/v1/completions", completion_body(3, true));
    ASSERT_EQ(r.status, 200);
    ASSERT_TRUE(r.complete);
    EXPECT_EQ(r.events().size(), 4u);  // no usage chunk without stream_options
  }
}

TEST(SimServerOutputLength, MinTokensFloorsAndMaxTokensCapsTheDrawnLength) {
  Options o = fast_options();
  o.output_length.kind = OutputLengthDistribution::Kind::kUniform;
  o.output_length.min = 3;
  o.output_length.max = 3;
  Server s(o);
  s.start();
  RawClient c(s.port());
  auto usage_of = [&](const std::string& body) {
    Response r = c.request("POST", "/v1/completions", body);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  };
  json j = usage_of(R"({"prompt":"x","max_tokens":10})");
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  j = usage_of(R"({"prompt":"x","max_tokens":10,"min_tokens":7})");
  EXPECT_EQ(j["usage"]["completion_tokens"], 7);
  j = usage_of(R"({"prompt":"x","max_tokens":2})");
  EXPECT_EQ(j["usage"]["completion_tokens"], 2);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  j = usage_of(R"({"prompt":"x","max_tokens":10,"ignore_eos":true})");
  EXPECT_EQ(j["usage"]["completion_tokens"], 10);
}

TEST(SimServerTiming, FixedTtftAndItlHoldWithinTolerance) {
  Options o = fast_options();
  o.fixed.ttft = {50, 0};
  o.fixed.itl = {10, 0};
  Server s(o);
  s.start();
  RawClient c(s.port());
  int64_t t0 = core::mono_ns();
  Response r = c.request("POST", "/v1/completions", completion_body(11, true));
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.chunk_ns.size(), 12u);
  double ttft_ms = (r.chunk_ns[0] - t0) / 1e6;
  EXPECT_NEAR(ttft_ms, 50, 25);
  double itl_ms = (r.chunk_ns[10] - r.chunk_ns[0]) / 1e6 / 10;
  EXPECT_NEAR(itl_ms, 10, 5);
}

TEST_F(SimServerTest, BadRequestsGetOpenAiErrors) {
  RawClient c(port_);
  struct Case {
    std::string method, path, body;
    int status;
    std::string type;
  };
  const Case cases[] = {
      {"POST", "/v1/completions", "{oops", 400, "BadRequestError"},
      {"POST", "/v1/completions", R"({"model":"nope","prompt":"x"})", 404, "NotFoundError"},
      {"POST", "/v1/completions", R"({"model":"sim-model"})", 400, "BadRequestError"},
      {"POST", "/v1/chat/completions", R"({"model":"sim-model"})", 400, "BadRequestError"},
      {"POST", "/v1/nothing", "{}", 404, "NotFoundError"},
      {"GET", "/v1/completions", "", 405, "MethodNotAllowed"},
      {"POST", "/v1/models", "{}", 405, "MethodNotAllowed"},
      {"POST", "/v1/completions", R"({"prompt":"x","max_tokens":5000})", 400, "BadRequestError"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.method + " " + k.path + " " + k.body);
    Response r = c.request(k.method, k.path, k.body);  // all on one keep-alive connection
    EXPECT_EQ(r.status, k.status);
    EXPECT_EQ(r.headers["content-type"], "application/json");
    json j = json::parse(r.body);
    EXPECT_EQ(j["error"]["code"], k.status);
    EXPECT_EQ(j["error"]["type"], k.type);
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"].contains("param"));
  }
  Response r = c.request("POST", "/v1/completions", R"({"model":"nope","prompt":"x"})");
  EXPECT_EQ(json::parse(r.body)["error"]["message"], "The model `nope` does not exist.");
  EXPECT_EQ(json::parse(r.body)["error"]["param"], "model");
}

TEST(SimServerLimits, OversizedBodyGets413AndClose) {
  Options o = fast_options();
  o.max_body_bytes = 100;
  Server s(o);
  s.start();
  RawClient c(s.port());
  Response r =
      c.request("POST", "/v1/completions", R"({"prompt":")" + std::string(500, 'a') + R"("})");
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], 413);
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(SimServerTest, ModelsHealthVersion) {
  RawClient c(port_);
  Response r = c.request("GET", "/v1/models");
  ASSERT_EQ(r.status, 200);
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "sim-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(j["data"][0]["max_model_len"], 1000);
  r = c.request("GET", "/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");
  r = c.request("GET", "/version");
  EXPECT_EQ(r.status, 200);
}

TEST_F(SimServerTest, TokenizeAndDetokenizeAgreeWithTheTokenizer) {
  RawClient c(port_);
  Response r =
      c.request("POST", "/tokenize", R"({"model":"sim-model","prompt":"hello world, again"})");
  ASSERT_EQ(r.status, 200);
  json j = json::parse(r.body);
  auto ids = tok_->encode("hello world, again");
  EXPECT_EQ(j["count"], ids.size());
  EXPECT_EQ(j["tokens"].get<std::vector<int>>(), std::vector<int>(ids.begin(), ids.end()));
  EXPECT_EQ(j["max_model_len"], 1000);
  EXPECT_TRUE(j["token_strs"].is_null());
  r = c.request("POST", "/tokenize",
                R"({"messages":[{"role":"user","content":"a b"},{"role":"user","content":"c"}]})");
  EXPECT_EQ(json::parse(r.body)["count"], 3);
  std::vector<int> vocab_ids = {5, 77, 31999};
  r = c.request("POST", "/detokenize", json({{"tokens", vocab_ids}}).dump());
  ASSERT_EQ(r.status, 200);
  std::vector<tokenizer::TokenId> tids(vocab_ids.begin(), vocab_ids.end());
  EXPECT_EQ(json::parse(r.body)["prompt"], tok_->decode(tids));
  r = c.request("POST", "/detokenize", R"({"tokens":"x"})");
  EXPECT_EQ(r.status, 400);
}

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

TEST_F(SimServerTest, ClientDisconnectMidStreamCancelsAndServerKeepsServing) {
  {
    RawClient c(port_);
    c.send_request("POST", "/v1/completions", completion_body(500, true));
    Response partial = c.read_response(3);
    ASSERT_EQ(partial.chunks.size(), 3u);
  }  // closed here
  RawClient m(port_);
  double cancelled = -1;
  for (int i = 0; i < 100 && cancelled != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cancelled =
        metric(m.request("GET", "/metrics").body, "servebench_sim:requests_cancelled_total");
  }
  EXPECT_EQ(cancelled, 1);
  Response body = m.request("GET", "/metrics");
  EXPECT_EQ(metric(body.body, "vllm:num_requests_running"), 0);
  EXPECT_EQ(m.request("POST", "/v1/completions", completion_body(2, true)).status, 200);
}

// --- faults ------------------------------------------------------------------------------

Response faulted(uint16_t port, const std::string& fault, bool stream = true,
                 RawClient* reuse = nullptr) {
  RawClient own(port);
  RawClient& c = reuse ? *reuse : own;
  return c.request("POST", "/v1/completions", completion_body(6, stream),
                   "x-servebench-fault: " + fault + "\r\n");
}

TEST_F(SimServerTest, FaultHttpStatuses) {
  for (int status : {429, 500, 503}) {
    Response r = faulted(port_, std::to_string(status));
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(json::parse(r.body)["error"]["code"], status);
  }
}

TEST_F(SimServerTest, FaultResetClosesAfterNTokens) {
  Response r = faulted(port_, "reset:2");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.events().size(), 2u);
}

TEST_F(SimServerTest, FaultStallPausesThenFinishes) {
  int64_t t0 = core::mono_ns();
  Response r = faulted(port_, "stall:2:0.3");
  ASSERT_EQ(r.status, 200);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.events().size(), 7u);  // 6 tokens + [DONE]
  EXPECT_GE(r.chunk_ns[2] - r.chunk_ns[1], 250'000'000);
  EXPECT_GE(core::mono_ns() - t0, 300'000'000);
}

TEST_F(SimServerTest, FaultMalformedSendsOneBrokenEvent) {
  Response r = faulted(port_, "malformed:1");
  ASSERT_TRUE(r.complete);
  auto events = r.events();
  ASSERT_EQ(events.size(), 8u);  // 6 tokens, one broken, [DONE]
  int broken = 0;
  for (const auto& e : events) {
    if (e != "[DONE]" && !json::accept(e)) ++broken;
  }
  EXPECT_EQ(broken, 1);
  EXPECT_FALSE(json::accept(events[1]));
}

TEST_F(SimServerTest, FaultTruncateEndsBodyWithoutDoneAndKeepsConnection) {
  RawClient c(port_);
  Response r = faulted(port_, "truncate:3", true, &c);
  ASSERT_TRUE(r.complete);  // proper chunked terminator
  auto events = r.events();
  EXPECT_EQ(events.size(), 3u);
  for (const auto& e : events) EXPECT_NE(e, "[DONE]");
  EXPECT_EQ(c.request("GET", "/health").status, 200);
}

TEST_F(SimServerTest, FaultErrorEventAfter200ThenClose) {
  RawClient c(port_);
  Response r = faulted(port_, "error-event:2", true, &c);
  EXPECT_EQ(r.status, 200);
  auto events = r.events();
  ASSERT_EQ(events.size(), 3u);
  json err = json::parse(events[2]);
  EXPECT_EQ(err["error"]["code"], 500);
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(SimServerTest, FaultAtTokenZeroAndAfterTheLastToken) {
  Response r = faulted(port_, "reset:0");
  EXPECT_EQ(r.status, 200);  // headers went out at arrival
  EXPECT_TRUE(r.closed);
  EXPECT_EQ(r.events().size(), 0u);
  // AFTER_TOKENS past the output length: all 6 tokens, then the fault instead of the close.
  r = faulted(port_, "truncate:99");
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.events().size(), 6u);
  r = faulted(port_, "stall:99:0.2");
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.events().size(), 7u);
  EXPECT_GE(r.chunk_ns[6] - r.chunk_ns[5], 150'000'000);
}

TEST_F(SimServerTest, FaultsOnNonStreamingRequests) {
  {
    RawClient c(port_);
    Response r = faulted(port_, "error-event:2", false, &c);
    EXPECT_EQ(r.status, 500);
    EXPECT_EQ(json::parse(r.body)["error"]["code"], 500);
    EXPECT_EQ(c.request("GET", "/health").status, 200);  // kept alive
  }
  Response r = faulted(port_, "malformed", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(json::accept(r.body));
  r = faulted(port_, "truncate", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.closed);
  r = faulted(port_, "reset:3", false);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.closed);
  int64_t t0 = core::mono_ns();
  r = faulted(port_, "stall:1:0.2", false);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 6);
  EXPECT_GE(core::mono_ns() - t0, 200'000'000);
}

TEST_F(SimServerTest, BadFaultHeaderIs400) {
  Response r = faulted(port_, "explode");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(json::parse(r.body)["error"]["message"].get<std::string>().find("explode"),
            std::string::npos);
}

TEST(SimServerFaultRules, SeededRulesApplyToEveryRequestAtProbabilityOne) {
  Options o = fast_options();
  o.faults.push_back(parse_fault_rule("503:1"));
  Server s(o);
  s.start();
  RawClient c(s.port());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.request("POST", "/v1/completions", completion_body(2, false)).status, 503);
  }
}

TEST(SimServerFaultRules, ProbabilityIsSeededAndDeterministic) {
  auto pattern = [] {
    Options o = fast_options();
    o.faults.push_back(parse_fault_rule("429:0.5"));
    Server s(o);
    s.start();
    RawClient c(s.port());
    std::string p;
    for (int i = 0; i < 16; ++i) {
      p +=
          c.request("POST", "/v1/completions", completion_body(1, false)).status == 429 ? 'x' : '.';
    }
    return p;
  };
  std::string a = pattern();
  EXPECT_EQ(a, pattern());
  EXPECT_NE(a.find('x'), std::string::npos);
  EXPECT_NE(a.find('.'), std::string::npos);
}

// --- trace ---------------------------------------------------------------------------------

TEST(SimServerTrace, TraceRecordsDueAndSentTimesPerToken) {
  std::string path = ::testing::TempDir() + "sim_trace_test.jsonl";
  Options o = fast_options();
  o.trace_out = path;
  {
    Server s(o);
    s.start();
    RawClient c(s.port());
    int64_t before = core::mono_ns();
    ASSERT_EQ(
        c.request("POST", "/v1/completions", completion_body(4, true), "x-request-id: req-1\r\n")
            .status,
        200);
    ASSERT_EQ(c.request("POST", "/v1/completions", R"({"model":"x","prompt":"a"})").status, 404);
    c.send_request("POST", "/v1/completions", completion_body(500, true),
                   "x-request-id: req-3\r\n");
    ASSERT_EQ(c.read_response(2).chunks.size(), 2u);
    c.close();
    // A non-streaming request reset before its answer: no status line ever went out.
    RawClient reset(s.port());
    EXPECT_EQ(reset
                  .request("POST", "/v1/completions", completion_body(6, false),
                           "x-request-id: req-4\r\nx-servebench-fault: reset:3\r\n")
                  .status,
              0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s.stop();
    std::ifstream in(path);
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    ASSERT_EQ(lines.size(), 4u);
    const json& ok = lines[0];
    EXPECT_EQ(ok["request_id"], "req-1");
    EXPECT_EQ(ok["status"], 200);
    EXPECT_EQ(ok["outcome"], "ok");
    EXPECT_EQ(ok["fault"], "none");
    EXPECT_EQ(ok["prompt_tokens"], 4);
    EXPECT_EQ(ok["output_tokens"], 4);
    EXPECT_EQ(ok["tokens_sent"], 4);
    EXPECT_GE(ok["arrival_ns"].get<int64_t>(), before);
    auto due = ok["due_ns"].get<std::vector<int64_t>>();
    auto sent = ok["sent_ns"].get<std::vector<int64_t>>();
    ASSERT_EQ(due.size(), 4u);
    ASSERT_EQ(sent.size(), 4u);
    // Fixed mode, ttft 5 ms, itl 1 ms: due times are exact offsets from arrival.
    EXPECT_EQ(due[0] - ok["arrival_ns"].get<int64_t>(), 5'000'000);
    for (int k = 0; k < 4; ++k) {
      if (k > 0) {
        EXPECT_EQ(due[k] - due[k - 1], 1'000'000);
      }
      EXPECT_GE(sent[k], due[k]);
    }
    EXPECT_EQ(ok["first_token_sent_ns"], sent[0]);
    EXPECT_GE(ok["end_ns"].get<int64_t>(), sent[3]);
    EXPECT_EQ(lines[1]["status"], 404);
    EXPECT_EQ(lines[1]["outcome"], "rejected");
    // The last two end close together: find them by id.
    auto by_id = [&](const std::string& id) {
      for (const json& line : lines)
        if (line["request_id"] == id) return line;
      ADD_FAILURE() << "no trace line for " << id;
      return json::object();
    };
    const json cancelled = by_id("req-3");
    EXPECT_EQ(cancelled["outcome"], "cancelled");
    EXPECT_GE(cancelled["tokens_sent"].get<int>(), 2);
    EXPECT_LT(cancelled["tokens_sent"].get<int>(), 500);
    const json reset_line = by_id("req-4");
    EXPECT_EQ(reset_line["outcome"], "fault");
    EXPECT_EQ(reset_line["status"], 0);
  }
  std::filesystem::remove(path);
}

TEST(SimServerEngine, EngineModeStreamsExactCounts) {
  Options o = fast_options();
  o.mode = Options::Mode::kEngine;
  o.threads = 2;
  Server s(o);
  s.start();
  std::vector<std::thread> clients;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i) {
    clients.emplace_back([&] {
      RawClient c(s.port());
      Response r = c.request("POST", "/v1/completions", completion_body(8, true));
      if (r.status == 200 && r.complete && r.events().size() == 9) ++good;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(good.load(), 4);
}

TEST(SimServerThreads, ManyConcurrentStreamsAcrossThreads) {
  Options o = fast_options();
  o.threads = 2;
  o.fixed.itl = {2, 0};
  Server s(o);
  s.start();
  std::vector<std::unique_ptr<RawClient>> cs;
  for (int i = 0; i < 64; ++i) {
    cs.push_back(std::make_unique<RawClient>(s.port()));
    cs.back()->send_request("POST", "/v1/completions", completion_body(20, true));
  }
  int good = 0;
  for (auto& c : cs) {
    Response r = c->read_response();
    if (r.status == 200 && r.complete && r.events().size() == 21) ++good;
  }
  EXPECT_EQ(good, 64);
}

// Defect once: with the descriptor table full, accept failed with EMFILE and connections sat
// in the backlog unanswered forever. Now each is accepted with the spare descriptor and
// closed at once. The soft limit is lowered after start() (which raises it to the hard limit)
// and the table filled, leaving exactly one slot per client socket.
TEST(SimServerLimits, FullDescriptorTableClosesWaitingConnections) {
  Options o = fast_options();
  Server s(o);
  s.start();
  // Gives the process its limit and descriptors back however the test ends.
  struct Table {
    rlimit before{};
    std::vector<int> fillers;
    void release() {
      for (int fd : fillers) ::close(fd);
      fillers.clear();
      setrlimit(RLIMIT_NOFILE, &before);
    }
    ~Table() { release(); }
  } table;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &table.before), 0);
  int highest = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    highest = std::max(highest, std::atoi(entry.path().filename().c_str()));
  }
  rlimit low = table.before;
  low.rlim_cur = static_cast<rlim_t>(highest + 64);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) table.fillers.push_back(fd);
  ASSERT_EQ(errno, EMFILE);

  // One at a time, each client socket takes the one free slot, so the server has none.
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 3; ++i) {
    ::close(table.fillers.back());
    table.fillers.pop_back();
    clients.push_back(std::make_unique<RawClient>(s.port()));
    clients.back()->send_request("POST", "/v1/completions", completion_body(4, true));
    EXPECT_TRUE(clients.back()->closed_by_server(5000))
        << "connection " << i << " was left waiting";
  }

  // Once descriptors are free again, requests are served as before.
  clients.clear();
  table.release();
  RawClient c(s.port());
  Response r = c.request("POST", "/v1/completions", completion_body(4, true));
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.complete);
}

// Output ids are taken modulo the vocabulary size: an empty one is refused, not divided by.
class EmptyVocabulary final : public tokenizer::Tokenizer {
 public:
  std::vector<tokenizer::TokenId> encode(std::string_view) const override { return {}; }
  std::string decode(std::span<const tokenizer::TokenId>) const override { return ""; }
  std::string token_text(tokenizer::TokenId) const override { return ""; }
  int32_t vocab_size() const override { return 0; }
  std::string name() const override { return "empty"; }
};

TEST(SimServerTokenizer, EmptyVocabularyIsRefusedAtStart) {
  Options o = fast_options();
  o.tokenizer = std::make_shared<EmptyVocabulary>();
  Server s(o);
  try {
    s.start();
    ADD_FAILURE() << "an empty vocabulary was accepted";
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("empty vocabulary"), std::string::npos) << e.what();
  }
}

TEST(SimServerBind, TakenPortThrows) {
  Options o = fast_options();
  Server a(o);
  a.start();
  o.port = a.port();
  Server b(o);
  EXPECT_THROW(b.start(), core::Error);
}

}  // namespace
}  // namespace servebench::sim
