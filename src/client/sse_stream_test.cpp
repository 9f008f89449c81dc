#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_stream.h"
#include "client/testing/sse_bodies.h"

namespace servebench::client::detail {
namespace {

using record::RequestRecord;

TEST(StreamReader, CompletionStream) {
  std::string body = sse({text_event(" Hello"), text_event(" world"), text_event("!", "length"),
                          usage_event(5, 3), "[DONE]"});
  Result result = read_body(body);
  const RequestRecord& r = result.record;
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.generated_text, " Hello world!");
  EXPECT_EQ(r.chunk_ns, (std::vector<int64_t>{100, 100, 100}));  // the usage event is no chunk
  EXPECT_EQ(r.first_token_ns, 100);
  EXPECT_EQ(r.last_token_ns, 100);
  EXPECT_EQ(r.server_prompt_tokens, 5);
  EXPECT_EQ(r.server_completion_tokens, 3);
  EXPECT_TRUE(r.chunk_tokens.empty());  // no per-chunk usage
  EXPECT_EQ(result.events, 5u);
  EXPECT_TRUE(result.saw_done);
  EXPECT_EQ(result.done_ns, 100);
  EXPECT_FALSE(result.failed);
}

TEST(StreamReader, AnySplitOfTheBodyGivesTheSameRecord) {
  std::string body =
      sse({text_event(" a", nullptr, 1), text_event(" b", nullptr, 2)}) + ": ping\r\n\r\n" +
      sse({text_event(" c", "stop", 3), usage_event(5, 3)}, "\r\n\r\n") + sse({"[DONE]"});
  body += sse({text_event(" after done")});
  Result whole = read_body(body);
  ASSERT_TRUE(whole.record.success);
  ASSERT_EQ(whole.record.chunk_ns.size(), 3u);
  for (size_t piece = 1; piece <= 9; ++piece)
    expect_same(read_body(body, piece), whole, "pieces of " + std::to_string(piece));
  // Every two-piece split, at every byte.
  for (size_t at = 1; at < body.size(); ++at)
    expect_same(read_split(body, at), whole, "split at " + std::to_string(at));
}

TEST(StreamReader, EventTimeIsTheReadThatCompletesIt) {
  std::string first = "data: " + text_event(" a") + "\n\ndata: " + text_event(" b");
  std::string second = "\n";
  std::string third = "\ndata: " + text_event(" c", "stop") + "\n\n";
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  reader.feed(first.data(), first.size(), 10);
  reader.feed(second.data(), second.size(), 20);  // "\n" alone does not end the event
  reader.feed(third.data(), third.size(), 30);
  reader.finish(40);
  EXPECT_EQ(record.chunk_ns, (std::vector<int64_t>{10, 30, 30}));
  EXPECT_EQ(record.first_token_ns, 10);
  EXPECT_EQ(record.last_token_ns, 30);
  EXPECT_TRUE(record.success);  // finish_reason, no [DONE]
  EXPECT_FALSE(reader.saw_done());
  EXPECT_EQ(record.generated_text, " a b c");
}

TEST(StreamReader, CrLfSeparators) {
  std::string body =
      sse({text_event(" x"), text_event(" y", "stop"), usage_event(5, 2), "[DONE]"}, "\r\n\r\n");
  for (size_t piece : {size_t{0}, size_t{1}, size_t{2}, size_t{3}}) {
    Result result = read_body(body, piece);
    EXPECT_TRUE(result.record.success) << piece;
    EXPECT_EQ(result.record.generated_text, " x y") << piece;
    EXPECT_EQ(result.record.chunk_ns.size(), 2u) << piece;
    EXPECT_EQ(result.record.server_completion_tokens, 2) << piece;
    EXPECT_TRUE(result.saw_done) << piece;
  }
}

TEST(StreamReader, PingCommentsAreSkipped) {
  std::string body = ": ping\n\n" + sse({text_event(" x")}) + ": ping - 2024-01-01\n\n" +
                     ": comment line\ndata: " + text_event(" y", "stop") + "\n\n" +
                     "data: [DONE]\n\n";
  Result result = read_body(body);
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.generated_text, " x y");
  EXPECT_EQ(result.record.chunk_ns.size(), 2u);
  EXPECT_EQ(result.events, 3u);  // comments are not events
}

TEST(StreamReader, DataWithoutSpace) {
  std::string body = "data:" + text_event(" x", "stop") + "\n\ndata:[DONE]\n\n";
  Result result = read_body(body);
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.generated_text, " x");
  EXPECT_TRUE(result.saw_done);
}

TEST(StreamReader, MultiLineDataIsJoined) {
  // The JSON split over three data lines (joined with '\n', which JSON treats as whitespace).
  std::string body =
      "data: {\"choices\":[{\"index\":0,\ndata: \"text\":\" joined\",\ndata: "
      "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
  Result result = read_body(body);
  EXPECT_TRUE(result.record.success) << result.record.error;
  EXPECT_EQ(result.record.generated_text, " joined");
  EXPECT_EQ(result.record.chunk_ns.size(), 1u);
  EXPECT_EQ(result.events, 2u);
}

TEST(StreamReader, ChatRoleOnlyFirstDeltaCountsAsAChunk) {
  // vLLM's chat stream starts with a role-only delta. Its "choices" is not empty, so, as in
  // vLLM's benchmark client, it ends TTFT and is the first chunk although it carries no text.
  std::string body = sse({
      R"({"id":"chat-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"chat-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" Hi"},"logprobs":null,"finish_reason":null}]})",
      R"({"id":"chat-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" there"},"logprobs":null,"finish_reason":"stop"}]})",
      R"({"id":"chat-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":9,"total_tokens":11,"completion_tokens":2}})",
      "[DONE]",
  });
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  size_t first_end = body.find("\n\n") + 2;
  reader.feed(body.data(), first_end, 10);  // the role chunk alone
  reader.feed(body.data() + first_end, body.size() - first_end, 20);
  reader.finish(30);
  EXPECT_TRUE(record.success);
  EXPECT_EQ(record.first_token_ns, 10);
  EXPECT_EQ(record.chunk_ns, (std::vector<int64_t>{10, 20, 20}));
  EXPECT_EQ(record.generated_text, " Hi there");
  EXPECT_EQ(record.server_completion_tokens, 2);
  EXPECT_EQ(record.server_prompt_tokens, 9);
}

TEST(StreamReader, EmptyTextChunksAreChunks) {
  Result result =
      read_body(sse({text_event(""), text_event(" a"), text_event("", "stop"), "[DONE]"}));
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.chunk_ns.size(), 3u);
  EXPECT_EQ(result.record.generated_text, " a");
}

TEST(StreamReader, NullTextAndNullDeltaAreEmpty) {
  Result result = read_body(sse(
      {R"({"choices":[{"index":0,"text":null,"finish_reason":null}]})",
       R"({"choices":[{"index":0,"delta":null,"finish_reason":null}]})",
       R"({"choices":[{"index":0,"delta":{"content":null},"finish_reason":"stop"}]})", "[DONE]"}));
  EXPECT_TRUE(result.record.success) << result.record.error;
  EXPECT_EQ(result.record.chunk_ns.size(), 3u);
  EXPECT_EQ(result.record.generated_text, "");
}

TEST(StreamReader, ContinuousUsageFillsChunkTokens) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  std::string body = sse({text_event(" a", nullptr, 1), text_event(" b c", nullptr, 3),
                          text_event(" d", "length", 4), usage_event(5, 4), "[DONE]"});
  reader.feed(body.data(), body.size(), 50);
  reader.finish(60);
  EXPECT_TRUE(record.success);
  EXPECT_EQ(record.chunk_tokens, (std::vector<int32_t>{1, 2, 1}));  // deltas of the running total
  EXPECT_EQ(record.chunk_tokens.size(), record.chunk_ns.size());
  EXPECT_EQ(record.server_completion_tokens, 4);
  EXPECT_EQ(record.server_prompt_tokens, 5);
}

TEST(StreamReader, ChunkTokensClearedWhenAChoiceEventLacksUsage) {
  Result result = read_body(sse({text_event(" a", nullptr, 1), text_event(" b"),
                                 text_event(" c", "stop", 3), usage_event(5, 3), "[DONE]"}));
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.chunk_ns.size(), 3u);
  EXPECT_TRUE(result.record.chunk_tokens.empty());
  EXPECT_EQ(result.record.server_completion_tokens, 3);
}

TEST(StreamReader, DoneEndsTheStreamAndLaterBytesAreIgnored) {
  std::string head = sse({text_event(" a"), "[DONE]"});
  std::string after = sse({text_event(" late")}) + "data: {not json\n\n";
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  reader.feed(head.data(), head.size(), 10);
  EXPECT_TRUE(reader.saw_done());
  reader.feed(after.data(), after.size(), 20);
  reader.finish(30);
  EXPECT_TRUE(record.success);  // [DONE] without finish_reason is enough
  EXPECT_EQ(reader.done_ns(), 10);
  EXPECT_EQ(record.generated_text, " a");
  EXPECT_EQ(record.chunk_ns.size(), 1u);
  EXPECT_EQ(reader.events(), 2u);
}

TEST(StreamReader, FinishReasonWithoutDoneIsSuccess) {
  Result result = read_body(sse({text_event(" a"), text_event(" b", "stop"), usage_event(5, 2)}));
  EXPECT_TRUE(result.record.success) << result.record.error;
  EXPECT_FALSE(result.saw_done);
  EXPECT_EQ(result.done_ns, -1);
}

TEST(StreamReader, NeitherDoneNorFinishReasonIsFailure) {
  Result result = read_body(sse({text_event(" a"), text_event(" b")}));
  EXPECT_FALSE(result.record.success);
  EXPECT_EQ(result.record.error, "stream ended without [DONE] or finish_reason");
  EXPECT_EQ(result.record.first_token_ns, 100);  // what was measured stays
  EXPECT_EQ(result.record.generated_text, " a b");
}

TEST(StreamReader, FinishReasonMustBeOnTheLastChoicesEvent) {
  Result result = read_body(sse({text_event(" a", "stop"), text_event(" b")}));
  EXPECT_FALSE(result.record.success);
  EXPECT_EQ(result.record.error, "stream ended without [DONE] or finish_reason");
}

TEST(StreamReader, NoChoicesEventIsFailure) {
  Result result = read_body(sse({usage_event(5, 0), "[DONE]"}));
  EXPECT_FALSE(result.record.success);
  EXPECT_EQ(result.record.error, "no choices event in the stream (no first token)");
  EXPECT_EQ(result.record.first_token_ns, -1);
  Result empty = read_body("");
  EXPECT_FALSE(empty.record.success);
  EXPECT_EQ(empty.record.error, "no choices event in the stream (no first token)");
}

TEST(StreamReader, ErrorEventAfterChunksIsFailureWithTheMessage) {
  std::string body = sse(
      {text_event(" a"),
       R"({"error":{"object":"error","message":"engine died: out of memory","type":"InternalServerError","code":500}})",
       text_event(" b", "stop"), "[DONE]"});
  Result result = read_body(body);
  EXPECT_FALSE(result.record.success);
  EXPECT_TRUE(result.failed);
  EXPECT_EQ(result.record.error, "server error event: engine died: out of memory");
  EXPECT_EQ(result.record.first_token_ns, 100);
  EXPECT_EQ(result.record.generated_text, " a");  // nothing after the error is read
  EXPECT_EQ(result.record.chunk_ns.size(), 1u);
  EXPECT_FALSE(result.saw_done);
}

TEST(StreamReader, ErrorEventAsStringOrWithoutMessage) {
  Result text = read_body(sse({R"({"error":"bad thing"})"}));
  EXPECT_FALSE(text.record.success);
  EXPECT_EQ(text.record.error, "server error event: bad thing");
  Result bare = read_body(sse({R"({"error":{"code":500}})"}));
  EXPECT_FALSE(bare.record.success);
  EXPECT_EQ(bare.record.error, "server error event: (no message)");
  Result null_error =
      read_body(sse({R"({"error":null,"choices":[{"text":"x","finish_reason":"stop"}]})"}));
  EXPECT_TRUE(null_error.record.success) << null_error.record.error;
}

TEST(StreamReader, MalformedEventNamesItsByteOffset) {
  std::string good = sse({text_event(" a")});
  std::string body = good + ": ping\n\n" + "data: {\"choices\":[{\"text\":\n\n" +
                     sse({text_event(" b", "stop"), "[DONE]"});
  size_t offset = good.size() + std::string(": ping\n\n").size();
  for (size_t piece : {size_t{0}, size_t{1}, size_t{7}}) {
    Result result = read_body(body, piece);
    EXPECT_FALSE(result.record.success) << piece;
    EXPECT_EQ(result.record.error, "malformed SSE event at byte " + std::to_string(offset))
        << piece;
    EXPECT_EQ(result.record.generated_text, " a") << piece;  // later events ignored
    EXPECT_EQ(result.record.chunk_ns.size(), 1u) << piece;
  }
}

TEST(StreamReader, TrailingGarbageAfterTheObjectIsMalformed) {
  for (const std::string& event : {text_event(" a", "stop") + " x", text_event(" a", "stop") + "}",
                                   text_event(" a", "stop") + "{}", std::string("[1,2]"),
                                   std::string("\"text\""), std::string("{\"choices\":3}")}) {
    Result result = read_body(sse({event}));
    EXPECT_FALSE(result.record.success) << event;
    EXPECT_EQ(result.record.error, "malformed SSE event at byte 0") << event;
  }
  // Trailing spaces and CR are not garbage.
  Result spaced = read_body("data: " + text_event(" a", "stop") + "  \r\n\r\n");
  EXPECT_TRUE(spaced.record.success) << spaced.record.error;
}

TEST(StreamReader, ReasoningContentIsGeneratedText) {
  Result result = read_body(sse({
      R"({"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"Let me think."},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"reasoning":" Still thinking."},"finish_reason":null}]})",
      R"({"choices":[{"index":0,"delta":{"content":" Answer."},"finish_reason":"stop"}]})",
      "[DONE]",
  }));
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.generated_text, "Let me think. Still thinking. Answer.");
  EXPECT_EQ(result.record.chunk_ns.size(), 3u);
}

TEST(StreamReader, OnlyTheFirstChoiceCounts) {
  Result result = read_body(sse(
      {R"({"choices":[{"index":0,"text":" a","finish_reason":"stop"},{"index":1,"text":" b","finish_reason":null}]})"}));
  EXPECT_TRUE(result.record.success);
  EXPECT_EQ(result.record.generated_text, " a");
}

TEST(StreamReader, UnterminatedLastEventIsAcceptedByFinish) {
  std::string body = sse({text_event(" a")}) + "data: " + text_event(" b", "stop");
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  reader.feed(body.data(), body.size(), 10);
  EXPECT_EQ(record.chunk_ns.size(), 1u);  // the last event is not complete yet
  reader.finish(20);
  EXPECT_TRUE(record.success) << record.error;
  EXPECT_EQ(record.chunk_ns, (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(record.generated_text, " a b");

  Result done = read_body(sse({text_event(" a")}) + "data: [DONE]\n");
  EXPECT_TRUE(done.record.success);
  EXPECT_TRUE(done.saw_done);
  EXPECT_EQ(done.done_ns, 900);  // at finish

  Result cut = read_body(sse({text_event(" a")}) + "data: {\"choices\":[{\"te");
  EXPECT_FALSE(cut.record.success);
  EXPECT_EQ(cut.record.error,
            "malformed SSE event at byte " + std::to_string(sse({text_event(" a")}).size()));
}

TEST(StreamReader, BeginResetsForTheNextRequest) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord failed;
  reader.begin(&failed);
  std::string bad = "data: {oops}\n\ndata: " + text_event(" partial");
  reader.feed(bad.data(), bad.size(), 5);
  reader.finish(6);
  ASSERT_FALSE(failed.success);

  RequestRecord next;
  reader.begin(&next);
  EXPECT_FALSE(reader.failed());
  EXPECT_FALSE(reader.saw_done());
  EXPECT_EQ(reader.events(), 0u);
  std::string body = sse({text_event(" ok", nullptr, 1), text_event(" fine", "stop", 2), "[DONE]"});
  reader.feed(body.data(), body.size(), 7);
  reader.finish(8);
  EXPECT_TRUE(next.success) << next.error;
  EXPECT_EQ(next.generated_text, " ok fine");
  EXPECT_EQ(next.chunk_tokens, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(reader.events(), 3u);
}

TEST(OneLineMessage, ControlCharactersBecomeSpaces) {
  EXPECT_EQ(one_line_message("line one\nline two\r\n\tend"), "line one line two   end");
  EXPECT_EQ(one_line_message("trailing\n\n"), "trailing");
  EXPECT_EQ(one_line_message(std::string("nul\0byte", 8)), "nul byte");
  EXPECT_EQ(one_line_message("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 is not a control char
}

TEST(OneLineMessage, CutAtMaxBytes) {
  EXPECT_EQ(one_line_message(std::string(10, 'x'), 10), std::string(10, 'x'));
  EXPECT_EQ(one_line_message(std::string(11, 'x'), 10), std::string(10, 'x') + "…");
  std::string longest = one_line_message(std::string(1000, 'y'));
  EXPECT_EQ(longest, std::string(200, 'y') + "…");
}

TEST(OneLineMessage, RedactsSecrets) {
  std::string message = one_line_message(
      "401 for Authorization header\nBearer sk-abcdefghijklmnop1234 and key sk-zyxwvutsrqpo9876");
  EXPECT_EQ(message.find("abcdefghijklmnop1234"), std::string::npos) << message;
  EXPECT_EQ(message.find("zyxwvutsrqpo9876"), std::string::npos) << message;
  EXPECT_NE(message.find("<redacted>"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_EQ(one_line_message("Authorization: Bearer abc.def"), "Authorization: <redacted>");
}

TEST(OneLineMessage, CutNeverLeavesPartOfASecret) {
  // The cut falls inside the key: what is left of it must not show.
  std::string message = one_line_message(std::string(190, 'x') + " sk-abcdefghijklmnopqrstuvwxyz");
  EXPECT_EQ(message.find("abc"), std::string::npos) << message;
  EXPECT_EQ(message.rfind(std::string(190, 'x'), 0), 0u) << message;
}

}  // namespace
}  // namespace servebench::client::detail
