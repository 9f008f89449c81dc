#include "client/request_body.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"

namespace servebench::client::detail {
namespace {

using nlohmann::ordered_json;

std::vector<std::string> keys_of(const ordered_json& object) {
  std::vector<std::string> keys;
  for (const auto& item : object.items()) keys.push_back(item.key());
  return keys;
}

Endpoint completions_endpoint() {
  Endpoint endpoint;
  endpoint.url = "http://127.0.0.1:1/v1/completions";
  endpoint.api = Api::kCompletions;
  endpoint.model = "test-model";
  return endpoint;
}

Endpoint chat_endpoint() {
  Endpoint endpoint = completions_endpoint();
  endpoint.url = "http://127.0.0.1:1/v1/chat/completions";
  endpoint.api = Api::kChatCompletions;
  return endpoint;
}

PlannedRequest planned(std::string prompt, int32_t max_tokens) {
  PlannedRequest request;
  request.index = 7;
  request.prompt = std::move(prompt);
  request.prompt_tokens = 3;
  request.max_tokens = max_tokens;
  return request;
}

ordered_json parse(const RequestBody& body) {
  return ordered_json::parse(body.json);
}

TEST(RequestBody, CompletionsFieldsInVllmOrder) {
  BodyOptions options;
  options.continuous_usage_stats = false;
  RequestBody body = build_request_body(completions_endpoint(), options, ordered_json::object(),
                                        planned("Hello there", 16));
  ordered_json json = parse(body);
  EXPECT_EQ(keys_of(json),
            (std::vector<std::string>{"model", "prompt", "repetition_penalty", "max_tokens",
                                      "logprobs", "stream", "stream_options"}));
  EXPECT_EQ(json["model"], "test-model");
  EXPECT_EQ(json["prompt"], "Hello there");
  EXPECT_EQ(json["repetition_penalty"], 1.0);
  EXPECT_EQ(json["max_tokens"], 16);
  EXPECT_TRUE(json["logprobs"].is_null());
  EXPECT_EQ(json["stream"], true);
  EXPECT_EQ(json["stream_options"], ordered_json::parse(R"({"include_usage":true})"));
  EXPECT_EQ(body.usage_stats_offset, std::string::npos);
}

TEST(RequestBody, ChatFieldsInVllmOrder) {
  BodyOptions options;
  options.continuous_usage_stats = false;
  RequestBody body = build_request_body(chat_endpoint(), options, ordered_json::object(),
                                        planned("Hi \"you\"\n", 5));
  ordered_json json = parse(body);
  EXPECT_EQ(keys_of(json), (std::vector<std::string>{"model", "messages", "max_completion_tokens",
                                                     "stream", "stream_options"}));
  ordered_json messages =
      ordered_json::parse(R"([{"role":"user","content":[{"type":"text","text":"Hi \"you\"\n"}]}])");
  EXPECT_EQ(json["messages"], messages);
  EXPECT_EQ(keys_of(json["messages"][0]), (std::vector<std::string>{"role", "content"}));
  EXPECT_EQ(keys_of(json["messages"][0]["content"][0]), (std::vector<std::string>{"type", "text"}));
  EXPECT_EQ(json["max_completion_tokens"], 5);
  EXPECT_FALSE(json.contains("max_tokens"));
  EXPECT_FALSE(json.contains("prompt"));
  EXPECT_EQ(json["stream"], true);
}

TEST(RequestBody, IgnoreEosOnlyWhenSetAndAfterStreamOptions) {
  BodyOptions options;
  EXPECT_FALSE(parse(build_request_body(completions_endpoint(), options, ordered_json::object(),
                                        planned("x", 1)))
                   .contains("ignore_eos"));
  options.ignore_eos = true;
  for (const Endpoint& endpoint : {completions_endpoint(), chat_endpoint()}) {
    ordered_json json =
        parse(build_request_body(endpoint, options, ordered_json::object(), planned("x", 1)));
    std::vector<std::string> keys = keys_of(json);
    ASSERT_GE(keys.size(), 2u);
    EXPECT_EQ(keys[keys.size() - 2], "stream_options");
    EXPECT_EQ(keys.back(), "ignore_eos");
    EXPECT_EQ(json["ignore_eos"], true);
  }
}

TEST(RequestBody, ExtraBodyMergedLastAndOverriding) {
  BodyOptions options;
  options.ignore_eos = true;
  options.continuous_usage_stats = false;
  ordered_json extra = parse_extra_body(R"({"temperature":0.5,"max_tokens":3,"ignore_eos":false})");
  ordered_json json =
      parse(build_request_body(completions_endpoint(), options, extra, planned("x", 10)));
  // As Python's dict.update: existing keys keep their place with the new value, new keys last.
  EXPECT_EQ(keys_of(json), (std::vector<std::string>{
                               "model", "prompt", "repetition_penalty", "max_tokens", "logprobs",
                               "stream", "stream_options", "ignore_eos", "temperature"}));
  EXPECT_EQ(json["max_tokens"], 3);
  EXPECT_EQ(json["ignore_eos"], false);
  EXPECT_EQ(json["temperature"], 0.5);
}

TEST(RequestBody, ContinuousUsageStatsCanBeDropped) {
  BodyOptions options;  // continuous_usage_stats defaults to true
  for (const Endpoint& endpoint : {completions_endpoint(), chat_endpoint()}) {
    RequestBody body =
        build_request_body(endpoint, options, ordered_json::object(), planned("a prompt", 4));
    ordered_json json = parse(body);
    EXPECT_EQ(json["stream_options"],
              ordered_json::parse(R"({"include_usage":true,"continuous_usage_stats":true})"));
    ASSERT_NE(body.usage_stats_offset, std::string::npos);
    EXPECT_EQ(body.json.substr(body.usage_stats_offset, body.usage_stats_length),
              R"(,"continuous_usage_stats":true)");

    std::string before = body.json;
    body.drop_continuous_usage_stats();
    EXPECT_EQ(body.usage_stats_offset, std::string::npos);
    EXPECT_EQ(body.json.size(),
              before.size() - std::string(R"(,"continuous_usage_stats":true)").size());
    ordered_json dropped = ordered_json::parse(body.json);  // still valid JSON
    EXPECT_EQ(dropped["stream_options"], ordered_json::parse(R"({"include_usage":true})"));
    json.erase("stream_options");
    dropped.erase("stream_options");
    EXPECT_EQ(dropped, json);  // nothing else changed

    EXPECT_EQ(body.json.find("continuous_usage_stats"), std::string::npos);
    std::string once = body.json;
    body.drop_continuous_usage_stats();  // a second drop is a no-op
    EXPECT_EQ(body.json, once);
  }
}

TEST(RequestBody, PromptMentioningTheFieldIsNotCut) {
  BodyOptions options;
  std::string prompt = R"("stream_options":{"include_usage":true,"continuous_usage_stats":true})";
  RequestBody body = build_request_body(completions_endpoint(), options, ordered_json::object(),
                                        planned(prompt, 4));
  body.drop_continuous_usage_stats();
  ordered_json json = ordered_json::parse(body.json);
  EXPECT_EQ(json["prompt"], prompt);
  EXPECT_EQ(json["stream_options"], ordered_json::parse(R"({"include_usage":true})"));
}

TEST(RequestBody, ExtraBodyReplacingStreamOptionsLeavesNothingToDrop) {
  BodyOptions options;
  ordered_json extra = parse_extra_body(R"({"stream_options":{"include_usage":false}})");
  RequestBody body = build_request_body(completions_endpoint(), options, extra, planned("x", 1));
  EXPECT_EQ(body.usage_stats_offset, std::string::npos);
  std::string before = body.json;
  body.drop_continuous_usage_stats();
  EXPECT_EQ(body.json, before);
  EXPECT_EQ(ordered_json::parse(body.json)["stream_options"],
            ordered_json::parse(R"({"include_usage":false})"));
}

TEST(RequestBody, InvalidUtf8InPromptIsReplacedNotThrown) {
  BodyOptions options;
  RequestBody body = build_request_body(completions_endpoint(), options, ordered_json::object(),
                                        planned("bad \xff byte", 1));
  ordered_json json = ordered_json::parse(body.json);
  EXPECT_EQ(json["prompt"], "bad \xEF\xBF\xBD byte");  // U+FFFD
}

TEST(ParseExtraBody, EmptyIsAnEmptyObject) {
  ordered_json extra = parse_extra_body("");
  EXPECT_TRUE(extra.is_object());
  EXPECT_TRUE(extra.empty());
}

TEST(ParseExtraBody, KeepsKeyOrder) {
  ordered_json extra = parse_extra_body(R"({"z":1,"a":{"b":2},"m":null})");
  EXPECT_EQ(keys_of(extra), (std::vector<std::string>{"z", "a", "m"}));
}

TEST(ParseExtraBody, RejectsWhatIsNotAnObject) {
  for (const char* text : {"[1,2]", "3", "\"text\"", "null", "{not json", "{\"a\":1} trailing"}) {
    try {
      parse_extra_body(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const core::Error& error) {
      EXPECT_EQ(error.kind(), core::ErrorKind::kUsage) << text;
      EXPECT_EQ(error.where(), "--extra-body") << text;
      EXPECT_NE(std::string(error.what()).find("--extra-body"), std::string::npos) << text;
    }
  }
}

TEST(ReadyCheckBody, OneStreamedTokenWithoutContinuousUsage) {
  ordered_json completions = ordered_json::parse(build_ready_check_body(completions_endpoint()));
  EXPECT_EQ(completions["model"], "test-model");
  EXPECT_EQ(completions["max_tokens"], 1);
  EXPECT_EQ(completions["stream"], true);
  EXPECT_EQ(completions["stream_options"], ordered_json::parse(R"({"include_usage":true})"));
  EXPECT_TRUE(completions["prompt"].is_string());
  EXPECT_FALSE(completions["prompt"].get<std::string>().empty());

  ordered_json chat = ordered_json::parse(build_ready_check_body(chat_endpoint()));
  EXPECT_EQ(chat["max_completion_tokens"], 1);
  EXPECT_EQ(chat["messages"][0]["role"], "user");
  EXPECT_EQ(chat["stream_options"], ordered_json::parse(R"({"include_usage":true})"));
}

}  // namespace
}  // namespace servebench::client::detail
