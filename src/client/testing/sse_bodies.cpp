#include "client/testing/sse_bodies.h"

#include <gtest/gtest.h>

#include "client/sse_stream.h"

namespace servebench::client::detail {

std::string text_event(const std::string& text, const char* finish_reason, int completion_tokens) {
  std::string event = R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m",)"
                      R"("choices":[{"index":0,"text":")" +
                      text + R"(","logprobs":null,"finish_reason":)" +
                      (finish_reason ? "\"" + std::string(finish_reason) + "\"" : "null") +
                      R"(,"stop_reason":null}])";
  if (completion_tokens >= 0)
    event += R"(,"usage":{"prompt_tokens":5,"total_tokens":)" +
             std::to_string(5 + completion_tokens) + R"(,"completion_tokens":)" +
             std::to_string(completion_tokens) + "}";
  return event + "}";
}

std::string usage_event(int prompt_tokens, int completion_tokens) {
  return R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[],)"
         R"("usage":{"prompt_tokens":)" +
         std::to_string(prompt_tokens) + R"(,"total_tokens":)" +
         std::to_string(prompt_tokens + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + "}}";
}

std::string sse(const std::vector<std::string>& events, std::string_view separator) {
  std::string body;
  for (const std::string& event : events) body += "data: " + event + std::string(separator);
  return body;
}

Result read_body(std::string_view body, size_t piece_bytes, int64_t now_ns, int64_t finish_ns,
                 bool template_enabled, int64_t step_ns) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  reader.set_template_enabled(template_enabled);
  Result result;
  reader.begin(&result.record);
  if (piece_bytes == 0) piece_bytes = body.size() + 1;
  for (size_t at = 0; at < body.size(); at += piece_bytes) {
    std::string piece(body.substr(at, piece_bytes));  // own buffer: the reader may not keep it
    reader.feed(piece.data(), piece.size(), now_ns);
    now_ns += step_ns;
  }
  reader.finish(finish_ns);
  result.events = reader.events();
  result.saw_done = reader.saw_done();
  result.done_ns = reader.done_ns();
  result.failed = reader.failed();
  result.template_hits = reader.template_hits();
  return result;
}

Result read_split(std::string_view body, size_t at) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  Result split;
  reader.begin(&split.record);
  reader.feed(body.data(), at, 100);
  reader.feed(body.data() + at, body.size() - at, 100);
  reader.finish(900);
  split.events = reader.events();
  split.saw_done = reader.saw_done();
  split.done_ns = reader.done_ns();
  split.failed = reader.failed();
  split.template_hits = reader.template_hits();
  return split;
}

void expect_same(const Result& a, const Result& b, const std::string& context) {
  EXPECT_EQ(record::to_json_line(a.record), record::to_json_line(b.record)) << context;
  // Raw bytes too: to_json_line replaces invalid UTF-8.
  EXPECT_EQ(a.record.generated_text, b.record.generated_text) << context;
  EXPECT_EQ(a.record.error, b.record.error) << context;
  EXPECT_EQ(a.events, b.events) << context;
  EXPECT_EQ(a.saw_done, b.saw_done) << context;
  EXPECT_EQ(a.done_ns, b.done_ns) << context;
  EXPECT_EQ(a.failed, b.failed) << context;
}

}  // namespace servebench::client::detail
