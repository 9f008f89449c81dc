// The simulator's HTTP front over real loopback sockets: framing, endpoints, errors, limits.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"
#include "sim/server_test_client.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

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
