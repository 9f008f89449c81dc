#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "record/record.h"

namespace servebench::record {
namespace {

TEST(RequestRecord, OutputTokensPreferUsageThenClientCountThenOne) {
  RequestRecord r;
  EXPECT_EQ(r.output_tokens(), 1);
  r.client_output_tokens = 7;
  EXPECT_EQ(r.output_tokens(), 7);
  r.server_completion_tokens = 9;
  EXPECT_EQ(r.output_tokens(), 9);
  r.prompt_tokens = 100;
  EXPECT_EQ(r.input_tokens(), 100);
  r.server_prompt_tokens = 101;
  EXPECT_EQ(r.input_tokens(), 101);
}

TEST(RequestRecord, JsonLineRoundTrips) {
  RequestRecord r;
  r.index = 42;
  r.request_id = "bench-42";
  r.intended_ns = 1000;
  r.sent_ns = 1100;
  r.first_byte_ns = 5000;
  r.first_token_ns = 5000;
  r.last_token_ns = 9000;
  r.done_ns = 9100;
  r.chunk_ns = {5000, 7000, 9000};
  r.chunk_tokens = {1, 1, 2};
  r.prompt_tokens = 10;
  r.expected_output_tokens = 4;
  r.server_completion_tokens = 4;
  r.http_status = 200;
  r.success = true;
  r.generated_text = "a \"quoted\" text\n";
  std::string line = to_json_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  RequestRecord back = from_json_line(line, "records.jsonl:1");
  EXPECT_EQ(back.index, 42u);
  EXPECT_EQ(back.chunk_ns, r.chunk_ns);
  EXPECT_EQ(back.chunk_tokens, r.chunk_tokens);
  EXPECT_EQ(back.generated_text, r.generated_text);
  EXPECT_EQ(back.output_tokens(), 4);
  EXPECT_TRUE(back.success);
  EXPECT_EQ(back.conversation, -1);
  EXPECT_EQ(back.turn, 0);
}

TEST(RequestRecord, UsageCountsPast32BitsRoundTripWhole) {
  RequestRecord r;
  r.server_prompt_tokens = (int64_t{1} << 32) + 7;
  r.server_completion_tokens = (int64_t{1} << 33) + 1;
  const RequestRecord back = from_json_line(to_json_line(r), "records.jsonl:1");
  EXPECT_EQ(back.server_prompt_tokens, 4294967303);
  EXPECT_EQ(back.input_tokens(), 4294967303);
  EXPECT_EQ(back.output_tokens(), 8589934593);
}

TEST(RequestRecord, ConversationAndTurnRoundTripAndDefaultWhenAbsent) {
  RequestRecord r;
  r.conversation = 12;
  r.turn = 3;
  std::string line = to_json_line(r);
  RequestRecord back = from_json_line(line, "records.jsonl:1");
  EXPECT_EQ(back.conversation, 12);
  EXPECT_EQ(back.turn, 3);
  // A line written before multi-turn existed has neither field.
  nlohmann::json old = nlohmann::json::parse(line);
  old.erase("conversation");
  old.erase("turn");
  RequestRecord older = from_json_line(old.dump(), "records.jsonl:2");
  EXPECT_EQ(older.conversation, -1);
  EXPECT_EQ(older.turn, 0);
}

// Every field set, to values that differ from one another.
RequestRecord full_record(std::string text) {
  RequestRecord r;
  r.index = 18'446'744'073'709'551'615u;  // the largest index still prints exactly
  r.request_id = "bench-\"7\"";
  r.warmup = true;
  r.conversation = 5;
  r.turn = 2;
  r.intended_ns = -3;
  r.sent_ns = 1100;
  r.first_byte_ns = 5000;
  r.first_token_ns = 5001;
  r.last_token_ns = 9'000'000'000'000;
  r.done_ns = 9'000'000'000'100;
  // The longest numbers there are (append_array writes them into room it sizes first).
  r.chunk_ns = {5001, 7000, 9'000'000'000'000, std::numeric_limits<int64_t>::max(),
                std::numeric_limits<int64_t>::min()};
  for (int64_t i = 0; i < 300; ++i) r.chunk_ns.push_back(-i * 1'000'000'007);
  // Runs of one value (the events of one read share its time), the longest number among them.
  for (int64_t value : {42, 42, 42, 7, 7, 0, 0}) r.chunk_ns.push_back(value);
  r.chunk_ns.insert(r.chunk_ns.end(), 3, std::numeric_limits<int64_t>::min());
  r.chunk_tokens = {1, 1, 0, -2, std::numeric_limits<int32_t>::min(), -2};
  r.prompt_tokens = 10;
  r.expected_output_tokens = 4;
  r.server_prompt_tokens = 11;
  r.server_completion_tokens = 12;
  r.client_output_tokens = 13;
  r.http_status = 503;
  r.success = false;
  r.error = "HTTP 503: \"busy\"\tretry";
  r.generated_text = std::move(text);
  return r;
}

// The line is exactly what nlohmann::json writes for the same object (its canonical dump of
// the parsed line), and reads back to the same record.
TEST(RequestRecord, JsonLineIsNlohmannsCanonicalDump) {
  std::string every_byte;  // every control character, quotes, backslashes, ASCII, DEL
  for (int c = 1; c < 0x80; ++c) every_byte.push_back(static_cast<char>(c));
  for (const std::string& text :
       {std::string(), std::string(" plain words"), every_byte, std::string("\0nul", 4),
        std::string("é ü 中文 😀 \u2028"), std::string(5000, 'x') + "\n\"\\"}) {
    SCOPED_TRACE(text.substr(0, 20));
    const RequestRecord r = full_record(text);
    const std::string line = to_json_line(r);
    EXPECT_EQ(line, nlohmann::json::parse(line).dump());
    const RequestRecord back = from_json_line(line, "records.jsonl:1");
    EXPECT_EQ(back.index, r.index);
    EXPECT_EQ(back.request_id, r.request_id);
    EXPECT_EQ(back.warmup, r.warmup);
    EXPECT_EQ(back.conversation, r.conversation);
    EXPECT_EQ(back.turn, r.turn);
    EXPECT_EQ(back.intended_ns, r.intended_ns);
    EXPECT_EQ(back.sent_ns, r.sent_ns);
    EXPECT_EQ(back.first_byte_ns, r.first_byte_ns);
    EXPECT_EQ(back.first_token_ns, r.first_token_ns);
    EXPECT_EQ(back.last_token_ns, r.last_token_ns);
    EXPECT_EQ(back.done_ns, r.done_ns);
    EXPECT_EQ(back.chunk_ns, r.chunk_ns);
    EXPECT_EQ(back.chunk_tokens, r.chunk_tokens);
    EXPECT_EQ(back.prompt_tokens, r.prompt_tokens);
    EXPECT_EQ(back.expected_output_tokens, r.expected_output_tokens);
    EXPECT_EQ(back.server_prompt_tokens, r.server_prompt_tokens);
    EXPECT_EQ(back.server_completion_tokens, r.server_completion_tokens);
    EXPECT_EQ(back.client_output_tokens, r.client_output_tokens);
    EXPECT_EQ(back.http_status, r.http_status);
    EXPECT_EQ(back.success, r.success);
    EXPECT_EQ(back.error, r.error);
    EXPECT_EQ(back.generated_text, r.generated_text);
  }
}

TEST(RequestRecord, InvalidUtf8IsReplacedNotThrown) {
  // A server that cut a multi-byte character; also a stray continuation byte in the error.
  RequestRecord r = full_record(std::string("ok \xe4\xb8", 5));
  r.error = std::string("bad \x80 byte");
  const std::string line = to_json_line(r);
  const RequestRecord back = from_json_line(line, "records.jsonl:1");
  EXPECT_EQ(back.generated_text, "ok \xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(back.error, "bad \xef\xbf\xbd byte");
  EXPECT_EQ(back.chunk_ns, r.chunk_ns);
}

TEST(RequestRecord, BadLineNamesThePlace) {
  try {
    from_json_line("{not json", "records.jsonl:7");
    FAIL() << "no error";
  } catch (const core::Error& e) {
    EXPECT_NE(std::string(e.what()).find("records.jsonl:7"), std::string::npos);
  }
  EXPECT_THROW(from_json_line("{\"index\":1}", "records.jsonl:8"), core::Error);
}

}  // namespace
}  // namespace servebench::record
