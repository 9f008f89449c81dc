#include <gtest/gtest.h>

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
