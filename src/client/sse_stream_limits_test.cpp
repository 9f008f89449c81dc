// The SSE reader at the edges (issue 19, item 10): CR-only line ends (WHATWG: CRLF, LF or CR),
// an event split over many reads searched once, the cap on one event's size, and usage counts
// past 32 bits (kept whole: 64-bit in the record).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "client/sse_stream.h"
#include "client/testing/sse_bodies.h"

namespace servebench::client::detail {
namespace {

using record::RequestRecord;

// Every split in two, and pieces of 1..9 bytes, give the record of `expected` read whole.
void expect_any_split_reads_as(const std::string& body, const Result& expected) {
  for (size_t piece = 0; piece <= 9; ++piece)
    expect_same(read_body(body, piece), expected, "pieces of " + std::to_string(piece));
  for (size_t at = 1; at < body.size(); ++at)
    expect_same(read_split(body, at), expected, "split at " + std::to_string(at));
}

std::vector<std::string> three_events() {
  return {text_event(" x", nullptr, 1), text_event(" y", nullptr, 2), text_event(" z", "stop", 3),
          usage_event(5, 3), "[DONE]"};
}

TEST(StreamReaderLineEnds, CrOnlyReadsAsLf) {
  const Result lf = read_body(sse(three_events()));
  ASSERT_TRUE(lf.record.success) << lf.record.error;
  ASSERT_EQ(lf.record.generated_text, " x y z");
  const std::string cr = sse(three_events(), "\r\r") + ": ping\r\r";
  expect_same(read_body(cr), lf, "CR whole");
  expect_any_split_reads_as(cr, lf);
}

TEST(StreamReaderLineEnds, CrThenCrLfAcrossReads) {
  // A CR-only first event, then CRLF ends: a CR ending one read and the LF starting the next
  // are one line end, not two (which would be a blank line inside "id:\r\ndata:").
  const std::vector<std::string> events = three_events();
  std::string body = "data: " + events[0] + "\r\r";
  for (size_t i = 1; i < events.size(); ++i)
    body += "id: " + std::to_string(i) + "\r\ndata: " + events[i] + "\r\n\r\n";
  const Result lf = read_body(sse(three_events()));
  expect_any_split_reads_as(body, lf);
}

TEST(StreamReaderLineEnds, MultiLineDataWithCrOnly) {
  const std::string body = "data: {\"choices\":[{\"index\":0,\r" +
                           std::string("data: \"text\":\" a\",") +
                           "\rdata: \"finish_reason\":\"stop\"}]}\r\rdata: [DONE]\r\r";
  const Result result = read_body(body);
  EXPECT_TRUE(result.record.success) << result.record.error;
  EXPECT_EQ(result.record.generated_text, " a");
  EXPECT_TRUE(result.saw_done);
}

// --- one event over many reads

TEST(StreamReaderBigEvent, SearchedOnceNotOnEveryRead) {
  // A 16 MiB text in one event, read 4 KiB at a time: each read's bytes are searched once, not
  // the whole event again (4096 reads of up to 16 MiB each were 32 GiB of searching).
  const std::string text(16 << 20, 'a');
  const std::string body = sse({text_event(text, "stop"), "[DONE]"});
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  for (size_t at = 0; at < body.size(); at += 4096)
    reader.feed(body.data() + at, std::min<size_t>(4096, body.size() - at), 100);
  reader.finish(200);
  EXPECT_TRUE(record.success) << record.error;
  EXPECT_EQ(record.generated_text.size(), text.size());
  EXPECT_LE(reader.searched_bytes(), 2 * body.size());
}

TEST(StreamReaderBigEvent, AnEventOverTheCapFailsTheRequest) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord record;
  reader.begin(&record);
  const std::string first = "data: " + text_event(" ok") + "\n\ndata: {\"choices\":[{\"text\":\"";
  reader.feed(first.data(), first.size(), 100);
  const std::string mib(1 << 20, 'b');
  for (size_t fed = 0; fed <= StreamReader::kMaxEventBytes; fed += mib.size())
    reader.feed(mib.data(), mib.size(), 200);
  EXPECT_TRUE(reader.failed());
  const std::string tail = "\"}]}\n\ndata: [DONE]\n\n";
  reader.feed(tail.data(), tail.size(), 300);
  reader.finish(400);
  EXPECT_FALSE(record.success);
  EXPECT_NE(record.error.find("an SSE event exceeds 64 MiB"), std::string::npos) << record.error;
  EXPECT_EQ(record.chunk_ns.size(), 1u);  // what came before is kept
  EXPECT_FALSE(reader.saw_done());
}

// --- usage counts past 32 bits

TEST(StreamReaderUsage, ACountPast32BitsIsRecordedWhole) {
  const int64_t huge = (int64_t{1} << 32) + 7;
  auto event = [&](const char* text, int64_t completion) {
    return R"({"id":"c","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":")" +
           std::string(text) +
           R"(","finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":)" +
           std::to_string(completion) + "}}";
  };
  // Full parse (the first event) and the template path (a later one of a repeated shape).
  for (const std::vector<std::string>& events :
       {std::vector<std::string>{event(" a", huge), "[DONE]"},
        std::vector<std::string>{event(" a", 1), event(" b", 2), event(" c", 3), event(" d", 4),
                                 event(" e", huge), "[DONE]"}}) {
    const Result result = read_body(sse(events));
    EXPECT_TRUE(result.record.success) << result.record.error;
    EXPECT_EQ(result.record.server_completion_tokens, 4294967303);
    EXPECT_EQ(result.record.output_tokens(), 4294967303);
    // No chunk carries 2^32 tokens: the per-chunk counts are dropped as unknown, not wrapped.
    EXPECT_TRUE(result.record.chunk_tokens.empty());
  }
}

}  // namespace
}  // namespace servebench::client::detail
