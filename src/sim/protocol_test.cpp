// Wire shapes and option parsing, without sockets.
#include "sim/protocol.h"

#include <gtest/gtest.h>

#include <simdjson.h>

#include "core/error.h"
#include "sim/sim.h"

namespace servebench::sim {
namespace {

using detail::ApiError;
using detail::Endpoint;
using detail::GenerationRequest;

class ParseTest : public ::testing::Test {
 protected:
  bool parse(Endpoint e, std::string_view body, int32_t max_model_len = 100) {
    detail::ParseLimits limits{"m", max_model_len};
    return detail::parse_generation_request(e, body, *tok_, limits, json_, req_, err_);
  }
  std::unique_ptr<tokenizer::Tokenizer> tok_ = tokenizer::make_word_tokenizer();
  simdjson::dom::parser json_;
  GenerationRequest req_;
  ApiError err_;
};

TEST_F(ParseTest, CompletionsDefaultsMaxTokensTo16AndCountsPromptWords) {
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"model":"m","prompt":"hello big world"})"));
  EXPECT_EQ(req_.prompt_tokens, 3);
  EXPECT_EQ(req_.max_tokens, 16);
  EXPECT_FALSE(req_.stream);
  EXPECT_FALSE(req_.include_usage);
}

TEST_F(ParseTest, ThePrefixKeyNamesEveryChatMessageButTheLastOrTheWholePrompt) {
  auto chat = [&](const std::string& system, const std::string& user) {
    EXPECT_TRUE(parse(Endpoint::kChat, R"({"model":"m","messages":[{"role":"system","content":")" +
                                           system + R"("},{"role":"user","content":")" + user +
                                           R"("}]})"));
    return std::make_pair(req_.prefix_key, req_.prefix_tokens);
  };
  auto a = chat("you are brief", "hello");
  auto b = chat("you are brief", "another question here");
  auto c = chat("you are verbose", "hello");
  EXPECT_NE(a.first, 0u);
  EXPECT_EQ(a, b);  // the same system prompt: the same prefix, its 3 tokens
  EXPECT_EQ(a.second, 3);
  EXPECT_NE(a.first, c.first);
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"model":"m","prompt":"one two three"})"));
  const uint64_t whole = req_.prefix_key;
  EXPECT_EQ(req_.prefix_tokens, 3);
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"model":"m","prompt":"one two four"})"));
  EXPECT_NE(req_.prefix_key, whole);
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"model":"m","prompt":[1,2,3]})"));
  EXPECT_NE(req_.prefix_key, 0u);
  EXPECT_EQ(req_.prefix_tokens, 3);
}

TEST_F(ParseTest, ChatDefaultsMaxTokensToRemainingContext) {
  ASSERT_TRUE(parse(Endpoint::kChat,
                    R"({"messages":[{"role":"system","content":"be brief"},)"
                    R"({"role":"user","content":[{"type":"text","text":"hi there"}]}]})"));
  EXPECT_EQ(req_.prompt_tokens, 4);  // 2 + 2, no template overhead
  EXPECT_EQ(req_.max_tokens, 96);    // 100 - 4
}

TEST_F(ParseTest, ChatMaxCompletionTokensWinsOverMaxTokens) {
  ASSERT_TRUE(parse(Endpoint::kChat,
                    R"({"messages":[{"role":"user","content":"a"}],"max_tokens":5,)"
                    R"("max_completion_tokens":7})"));
  EXPECT_EQ(req_.max_tokens, 7);
}

TEST_F(ParseTest, TokenIdPromptCountsIds) {
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"prompt":[1,2,3,4,5],"max_tokens":3})"));
  EXPECT_EQ(req_.prompt_tokens, 5);
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"prompt":[[7,8]],"max_tokens":3})"));
  EXPECT_EQ(req_.prompt_tokens, 2);
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"prompt":["one two"],"max_tokens":3})"));
  EXPECT_EQ(req_.prompt_tokens, 2);
}

TEST_F(ParseTest, StreamOptionsIncludeUsageDefaultsToTrue) {
  ASSERT_TRUE(parse(Endpoint::kCompletions, R"({"prompt":"x","stream":true,"stream_options":{}})"));
  EXPECT_TRUE(req_.include_usage);
  EXPECT_FALSE(req_.continuous_usage);
  ASSERT_TRUE(parse(Endpoint::kCompletions,
                    R"({"prompt":"x","stream":true,)"
                    R"("stream_options":{"include_usage":true,"continuous_usage_stats":true}})"));
  EXPECT_TRUE(req_.continuous_usage);
}

TEST_F(ParseTest, Rejections) {
  struct Case {
    Endpoint e;
    const char* body;
    int status;
    const char* param;
  };
  const Case cases[] = {
      {Endpoint::kCompletions, "{not json", 400, ""},
      {Endpoint::kCompletions, "[1]", 400, ""},
      {Endpoint::kCompletions, R"({"model":"other","prompt":"x"})", 404, "model"},
      {Endpoint::kCompletions, R"({"model":"m"})", 400, "prompt"},
      {Endpoint::kCompletions, R"({"prompt":""})", 400, "prompt"},
      {Endpoint::kCompletions, R"({"prompt":["a","b"]})", 400, "prompt"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":"5"})", 400, "max_tokens"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":0})", 400, "max_tokens"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":100})", 400, "max_tokens"},
      {Endpoint::kCompletions, R"({"prompt":"x","stream_options":{}})", 400, "stream_options"},
      {Endpoint::kCompletions, R"({"prompt":"x","max_tokens":3,"min_tokens":4})", 400,
       "min_tokens"},
      {Endpoint::kCompletions, R"({"prompt":"x","stream":"yes"})", 400, "stream"},
      {Endpoint::kCompletions, R"({"prompt":"x","logprobs":21})", 400, "logprobs"},
      {Endpoint::kCompletions, R"({"prompt":"x","logprobs":"2"})", 400, "logprobs"},
      {Endpoint::kChat, R"({"model":"m"})", 400, "messages"},
      {Endpoint::kChat, R"({"messages":[]})", 400, "messages"},
      {Endpoint::kChat, R"({"messages":[{"content":"no role"}]})", 400, "messages"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    EXPECT_FALSE(parse(c.e, c.body));
    EXPECT_EQ(err_.status, c.status);
    EXPECT_EQ(err_.param, c.param);
    EXPECT_FALSE(err_.message.empty());
  }
}

TEST_F(ParseTest, PromptAtContextLimitIsRejectedAsVllmSays) {
  std::string words;
  for (int i = 0; i < 10; ++i) words += " w";
  EXPECT_FALSE(parse(Endpoint::kCompletions, R"({"prompt":")" + words + R"("})", 10));
  EXPECT_EQ(err_.message,
            "This model's maximum context length is 10 tokens. However, your request has 10 "
            "input tokens. Please reduce the length of the input messages.");
  EXPECT_FALSE(parse(Endpoint::kCompletions, R"({"prompt":"a b c","max_tokens":8})", 10));
  EXPECT_EQ(err_.message,
            "'max_tokens' or 'max_completion_tokens' is too large: 8. This model's maximum "
            "context length is 10 tokens and your request has 3 input tokens (8 > 10 - 3).");
}

// Defect (issue 19): prompt + max_tokens overflowed int64 and the request passed the check.
TEST_F(ParseTest, LargestMaxTokensIsTooLargeNotOverflowed) {
  EXPECT_FALSE(
      parse(Endpoint::kCompletions, R"({"prompt":"a b c","max_tokens":9223372036854775807})", 10));
  EXPECT_EQ(err_.message,
            "'max_tokens' or 'max_completion_tokens' is too large: 9223372036854775807. This "
            "model's maximum context length is 10 tokens and your request has 3 input tokens "
            "(9223372036854775807 > 10 - 3).");
  EXPECT_FALSE(parse(Endpoint::kChat, R"({"messages":[{"role":"user","content":"a"}],)"
                                      R"("max_completion_tokens":9223372036854775807})"));
  EXPECT_EQ(err_.param, "max_tokens");
}

TEST(ProtocolTest, ErrorJsonShape) {
  EXPECT_EQ(
      detail::error_json(ApiError{404, "NotFoundError", "The model `x` does not exist.", "model"}),
      R"({"error":{"message":"The model `x` does not exist.","type":"NotFoundError",)"
      R"("param":"model","code":404}})");
  EXPECT_EQ(detail::error_json(detail::bad_request("say \"hi\"\n")),
            R"({"error":{"message":"say \"hi\"\n","type":"BadRequestError","param":null,)"
            R"("code":400}})");
}

TEST(ProtocolTest, CompletionChunksAsVllmSerializesThem) {
  auto shape = detail::make_chunk_shape(Endpoint::kCompletions, "cmpl-1", 7, "m", 3, false);
  std::string out;
  detail::append_token_event(out, shape, " tok", "", 1);
  EXPECT_EQ(out, R"(data: {"id":"cmpl-1","object":"text_completion","created":7,"model":"m",)"
                 R"("choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null,)"
                 R"("stop_reason":null}],"usage":null})"
                 "\n\n");
  out.clear();
  detail::append_usage_event(out, shape, 2);
  EXPECT_EQ(out,
            R"(data: {"id":"cmpl-1","object":"text_completion","created":7,"model":"m",)"
            R"("choices":[],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}})"
            "\n\n");
  auto cont = detail::make_chunk_shape(Endpoint::kCompletions, "cmpl-1", 7, "m", 3, true);
  out.clear();
  detail::append_token_event(out, cont, " tok", "length", 2);
  EXPECT_EQ(out, R"(data: {"id":"cmpl-1","object":"text_completion","created":7,"model":"m",)"
                 R"("choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":"length",)"
                 R"("stop_reason":null}],"usage":{"prompt_tokens":3,"total_tokens":5,)"
                 R"("completion_tokens":2,"prompt_tokens_details":null}})"
                 "\n\n");
}

TEST(ProtocolTest, ChatChunksAsVllmSerializesThem) {
  auto shape = detail::make_chunk_shape(Endpoint::kChat, "chatcmpl-1", 7, "m", 3, true);
  EXPECT_EQ(shape.role_event,
            R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,)"
            R"("model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},)"
            R"("logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3,)"
            R"("total_tokens":3,"completion_tokens":0}})"
            "\n\n");
  std::string out;
  detail::append_token_event(out, shape, " a", "", 1);
  EXPECT_EQ(out, R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,)"
                 R"("model":"m","choices":[{"index":0,"delta":{"content":" a"},"logprobs":null,)"
                 R"("finish_reason":null}],"usage":{"prompt_tokens":3,"total_tokens":4,)"
                 R"("completion_tokens":1}})"
                 "\n\n");
  auto plain = detail::make_chunk_shape(Endpoint::kChat, "chatcmpl-1", 7, "m", 3, false);
  out.clear();
  detail::append_token_event(out, plain, " a", "stop", 1);
  EXPECT_EQ(out, R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,)"
                 R"("model":"m","choices":[{"index":0,"delta":{"content":" a"},"logprobs":null,)"
                 R"("finish_reason":"stop","stop_reason":null}]})"
                 "\n\n");
}

TEST(ProtocolTest, OutputTokensAreDeterministicAndCountExactly) {
  auto tok = tokenizer::make_word_tokenizer();
  std::string text;
  for (int k = 0; k < 50; ++k) {
    auto id = detail::output_token_id(42, k, tok->vocab_size());
    EXPECT_EQ(id, detail::output_token_id(42, k, tok->vocab_size()));
    text += tok->token_text(id);
  }
  EXPECT_EQ(tok->count(text), 50u);
  EXPECT_NE(detail::output_token_id(42, 0, 32000), detail::output_token_id(43, 0, 32000));
  EXPECT_EQ(detail::output_token_id(42, 5, 0), 0);  // no division by an empty vocabulary
}

TEST(OptionsTest, FaultRules) {
  FaultRule r = parse_fault_rule("reset:0.25:3");
  EXPECT_EQ(r.kind, FaultRule::Kind::kResetMidStream);
  EXPECT_DOUBLE_EQ(r.probability, 0.25);
  EXPECT_EQ(r.after_tokens, 3);
  r = parse_fault_rule("stall:1:2:0.5");
  EXPECT_EQ(r.kind, FaultRule::Kind::kStall);
  EXPECT_DOUBLE_EQ(r.stall_s, 0.5);
  r = parse_fault_rule("429");
  EXPECT_EQ(r.kind, FaultRule::Kind::kHttp429);
  EXPECT_DOUBLE_EQ(r.probability, 1.0);
  r = parse_fault_header("error-event:4");
  EXPECT_EQ(r.kind, FaultRule::Kind::kErrorEventAfter200);
  EXPECT_EQ(r.after_tokens, 4);
  EXPECT_EQ(std::string(fault_kind_name(parse_fault_header("truncate").kind)), "truncate");
  EXPECT_EQ(std::string(fault_kind_name(parse_fault_header("malformed").kind)), "malformed");
  EXPECT_THROW(parse_fault_rule("boom"), core::Error);
  EXPECT_THROW(parse_fault_rule("500:2"), core::Error);
  EXPECT_THROW(parse_fault_rule("reset:0.5:x"), core::Error);
  EXPECT_THROW(parse_fault_rule("reset:1:1:1:1"), core::Error);
  try {
    parse_fault_rule("boom:1");
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--fault"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("boom"), std::string::npos);
  }
}

TEST(OptionsTest, OutputLength) {
  auto d = parse_output_length("uniform:2:9");
  EXPECT_EQ(d.kind, OutputLengthDistribution::Kind::kUniform);
  EXPECT_EQ(d.min, 2);
  EXPECT_EQ(d.max, 9);
  EXPECT_EQ(parse_output_length("max").kind, OutputLengthDistribution::Kind::kMaxTokens);
  d = parse_output_length("normal:100:10");
  EXPECT_DOUBLE_EQ(d.mean, 100);
  EXPECT_DOUBLE_EQ(d.stddev, 10);
  EXPECT_EQ(parse_output_length("exponential:50").kind,
            OutputLengthDistribution::Kind::kExponential);
  EXPECT_THROW(parse_output_length("uniform:9:2"), core::Error);
  EXPECT_THROW(parse_output_length("gauss:1"), core::Error);
  EXPECT_THROW(parse_output_length("uniform:1"), core::Error);
}

}  // namespace
}  // namespace servebench::sim
