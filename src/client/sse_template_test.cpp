// The SSE reader's template fast path (sse_template.cpp) must never change a record: every
// stream read with it gives what the full parse gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "client/sse_stream.h"
#include "client/testing/sse_bodies.h"

namespace servebench::client::detail {
namespace {

using record::RequestRecord;

// Real event shapes, one token each: `text` is JSON string content (already escaped).
std::string vllm_completion_event(std::string_view text, int completion_tokens,
                                  const char* finish_reason = nullptr) {
  return std::string(R"({"id":"cmpl-9f8e7d6c5b4a39281706f5e4d3c2b1a0","object":"text_completion",)"
                     R"("created":1712345678,"model":"meta-llama/Llama-3.1-8B-Instruct",)"
                     R"("choices":[{"index":0,"text":")") +
         std::string(text) + R"(","logprobs":null,"finish_reason":)" +
         (finish_reason ? "\"" + std::string(finish_reason) + "\"" : "null") +
         R"(,"stop_reason":null}],"usage":{"prompt_tokens":1024,"total_tokens":)" +
         std::to_string(1024 + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + R"(,"prompt_tokens_details":null}})";
}

std::string vllm_chat_event(std::string_view text, int completion_tokens,
                            const char* finish_reason = nullptr) {
  return std::string(
             R"({"id":"chatcmpl-0123456789abcdef","object":"chat.completion.chunk",)"
             R"("created":1712345678,"model":"m","choices":[{"index":0,"delta":{"content":")") +
         std::string(text) + R"("},"logprobs":null,"finish_reason":)" +
         (finish_reason ? "\"" + std::string(finish_reason) + "\"" : "null") +
         R"(}],"usage":{"prompt_tokens":7,"total_tokens":)" +
         std::to_string(7 + completion_tokens) + R"(,"completion_tokens":)" +
         std::to_string(completion_tokens) + "}}";
}

std::string sglang_chat_event(std::string_view text, int /*completion_tokens*/,
                              const char* finish_reason = nullptr) {
  return std::string(R"({"id":"a1b2c3","object":"chat.completion.chunk","created":1712345678,)"
                     R"("model":"m","choices":[{"index":0,"delta":{"role":null,"content":")") +
         std::string(text) +
         R"(","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":)" +
         (finish_reason ? "\"" + std::string(finish_reason) + "\"" : "null") +
         R"(,"matched_stop":null}],"usage":null})";
}

// bench/floor/floor_sse_server.cpp's event (--stamp send: the text is a 16-digit time stamp).
std::string floor_event(std::string_view text, int /*completion_tokens*/,
                        const char* finish_reason = nullptr) {
  return std::string(R"({"id":"cmpl-00000000000000070000000000000007","object":"text_completion",)"
                     R"("created":1712345678,"model":"m","choices":[{"index":0,"text":")") +
         std::string(text) + R"(","logprobs":null,"finish_reason":)" +
         (finish_reason ? "\"" + std::string(finish_reason) + "\"" : "null") +
         R"(,"stop_reason":null}],"usage":null})";
}

using EventMaker = std::string (*)(std::string_view, int, const char*);

// Token texts as servers send them (JSON string content).
const std::vector<std::string>& token_texts() {
  static const std::vector<std::string> texts = {
      " Hello",
      " world",
      ",",
      "\\n",
      "\\n\\n",
      " \\\"quoted\\\"",
      " caf\xc3\xa9",
      " \xf0\x9f\x98\x80",
      "\\t",
      "",
      " a\\\\b",
      " \\/",
      "\\u00e9",
      "\\ud83d\\ude00",
      " 12",
      " \xe2\x82\xac",
      "\\r\\n",
      " \\b\\f",
      " t0000001712345678",
  };
  return texts;
}

struct FastRun {
  Result result;
  uint64_t hits = 0;
};

// Feeds `events` as SSE, `per_feed` events per feed() (each feed 1000 ns after the previous).
FastRun read_events(const std::vector<std::string>& events, bool fast, size_t per_feed = 16) {
  ParseScratch scratch;
  StreamReader reader(&scratch);
  reader.set_template_enabled(fast);
  FastRun run;
  reader.begin(&run.result.record);
  int64_t now_ns = 1000;
  for (size_t first = 0; first < events.size(); first += per_feed) {
    std::string body;
    for (size_t i = first; i < events.size() && i < first + per_feed; ++i)
      body += "data: " + events[i] + "\n\n";
    reader.feed(body.data(), body.size(), now_ns);
    now_ns += 1000;
  }
  reader.finish(now_ns);
  run.result.events = reader.events();
  run.result.saw_done = reader.saw_done();
  run.result.done_ns = reader.done_ns();
  run.result.failed = reader.failed();
  run.hits = reader.template_hits();
  return run;
}

// The record with the fast path equals the record without it; returns the fast path's hits.
uint64_t expect_fast_path_changes_nothing(const std::vector<std::string>& events,
                                          const std::string& context, size_t per_feed = 16) {
  FastRun fast = read_events(events, true, per_feed);
  FastRun slow = read_events(events, false, per_feed);
  EXPECT_EQ(slow.hits, 0u) << context;
  expect_same(fast.result, slow.result, context);
  return fast.hits;
}

std::vector<std::string> token_stream(EventMaker make, int tokens) {
  std::vector<std::string> events;
  const std::vector<std::string>& texts = token_texts();
  for (int i = 1; i <= tokens; ++i)
    events.push_back(
        make(texts[static_cast<size_t>(i) % texts.size()], i, i == tokens ? "length" : nullptr));
  return events;
}

TEST(StreamReaderTemplate, LongStreamsTakeTheFastPath) {
  const struct {
    EventMaker make;
    const char* name;
  } shapes[] = {{vllm_completion_event, "vllm completions"},
                {vllm_chat_event, "vllm chat"},
                {sglang_chat_event, "sglang chat"},
                {floor_event, "floor"}};
  for (const auto& shape : shapes) {
    std::vector<std::string> events = token_stream(shape.make, 300);
    events.push_back(usage_event(1024, 300));
    events.push_back("[DONE]");
    uint64_t hits = expect_fast_path_changes_nothing(events, shape.name);
    // 300 token events: the first is parsed in full, the second teaches the template; the last
    // (finish_reason) and the 32 whose text has a \u escape take the full parse (which keeps
    // the template).
    EXPECT_EQ(hits, 265u) << shape.name;

    FastRun fast = read_events(events, true);
    const RequestRecord& r = fast.result.record;
    EXPECT_TRUE(r.success) << shape.name << ": " << r.error;
    EXPECT_EQ(r.chunk_ns.size(), 300u) << shape.name;
    // The unescaped texts of tokens 4 to 8 and 10 to 14.
    EXPECT_NE(r.generated_text.find("\n\n \"quoted\" caf\xc3\xa9 \xf0\x9f\x98\x80\t"),
              std::string::npos)
        << shape.name;
    EXPECT_NE(r.generated_text.find(" a\\b /\xc3\xa9\xf0\x9f\x98\x80 12"), std::string::npos)
        << shape.name;
    if (shape.make == vllm_completion_event || shape.make == vllm_chat_event) {
      EXPECT_EQ(r.chunk_tokens, std::vector<int32_t>(300, 1)) << shape.name;
      EXPECT_EQ(r.server_completion_tokens, 300) << shape.name;
    }
  }
}

// Template events are matched in place inside whole blocks (no newline search first). Every
// framing around them that scan() and on_block() accept, or reject, must read the same with
// the template on and off, however the body is split into reads.
TEST(StreamReaderTemplate, FramingAroundTemplateEventsChangesNothing) {
  const char* const framings[][2] = {
      {"data: ", "\n\n"},        {"data:", "\n\n"},
      {"data: ", "\r\n\r\n"},    {"data: ", "\r\n\n"},
      {"data: ", "\n\r\n"},      {"data: ", "  \n\n"},
      {"data: ", "\r\r\n\n"},    {": ping\n\ndata: ", "\n\n"},
      {"data: ", "\nid: 7\n\n"}, {"event: token\ndata: ", "\n\n"},
      {"data:  ", "\n\n"},       {"data: ", "\t\n\n"},
  };
  std::vector<std::string> events = token_stream(vllm_completion_event, 120);
  std::string body;
  for (size_t i = 0; i < events.size(); ++i) {
    // Runs of the plain framing (so a template is learned and used), then each other framing.
    const auto& framing = framings[i % 24 < 12 ? 0 : i % 12];
    body += framing[0] + events[i] + framing[1];
  }
  // A one-line template followed by its event split over two data lines (the '\n' joins them
  // as JSON whitespace after the '{').
  body += "data: {\ndata: " + events.back().substr(1) + "\n\ndata: [DONE]\n\n";
  for (size_t piece : {size_t{0}, size_t{1}, size_t{5}, size_t{300}, size_t{4096}}) {
    // Each read 1 ns after the previous: an event taken before its blank line arrived would
    // show in its chunk time.
    const Result fast = read_body(body, piece, 100, 1'000'000, true, 1);
    const Result slow = read_body(body, piece, 100, 1'000'000, false, 1);
    const std::string context = "pieces of " + std::to_string(piece);
    expect_same(fast, slow, context);
    EXPECT_TRUE(fast.record.success) << context << ": " << fast.record.error;
    EXPECT_EQ(fast.record.chunk_ns.size(), 121u) << context;
    EXPECT_GT(fast.template_hits, 60u) << context;
    EXPECT_EQ(slow.template_hits, 0u) << context;
  }
}

TEST(StreamReaderTemplate, DisabledTakesNoFastPathAndBeginResetsTheCount) {
  std::vector<std::string> events = token_stream(vllm_completion_event, 20);
  EXPECT_EQ(read_events(events, false).hits, 0u);
  ParseScratch scratch;
  StreamReader reader(&scratch);
  RequestRecord first;
  reader.begin(&first);
  std::string body;
  for (const std::string& event : events) body += "data: " + event + "\n\n";
  reader.feed(body.data(), body.size(), 1);
  reader.finish(2);
  EXPECT_GT(reader.template_hits(), 10u);
  RequestRecord second;
  reader.begin(&second);
  EXPECT_EQ(reader.template_hits(), 0u);
}

TEST(StreamReaderTemplate, ChatRoleChunkThenTokens) {
  std::vector<std::string> events = {
      R"({"id":"chat-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})"};
  for (int i = 0; i < 40; ++i)
    events.push_back(
        R"({"id":"chat-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" t)" +
        std::to_string(i) + R"("},"logprobs":null,"finish_reason":null}]})");
  events.push_back(
      R"({"id":"chat-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop"}]})");
  events.push_back("[DONE]");
  EXPECT_EQ(expect_fast_path_changes_nothing(events, "chat", 1), 39u);
  FastRun run = read_events(events, true, 1);
  EXPECT_TRUE(run.result.record.success);
  EXPECT_EQ(run.result.record.chunk_ns.size(), 42u);
  EXPECT_EQ(run.result.record.generated_text.substr(0, 9), " t0 t1 t2");
}

// One event, after the template is learned, replaced by a variant: same record either way.
TEST(StreamReaderTemplate, VariantsGiveTheFullParseResult) {
  const std::string base = vllm_completion_event(" tok", 3);
  auto replaced = [&](std::string_view from, std::string_view to) {
    std::string event = base;
    size_t at = event.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) event.replace(at, from.size(), to);
    return event;
  };
  std::vector<std::string> variants;
  // The text: escapes, \u escapes (valid, lone or reversed surrogates, short, not hex), invalid
  // escapes, raw control characters, valid and invalid UTF-8.
  for (const std::string& text : std::vector<std::string>{"\\n",
                                                          "\\\"",
                                                          "\\\\",
                                                          "\\/",
                                                          "\\b",
                                                          "\\f",
                                                          "\\r",
                                                          "\\t",
                                                          "a\\\\\\\"b",
                                                          "\\u00e9",
                                                          "\\u0000",
                                                          "\\ud83d\\ude00",
                                                          "\\ud83d",
                                                          "\\ude00",
                                                          "\\ud83d\\u0041",
                                                          "\\ude00\\ud83d",
                                                          "\\u12",
                                                          "\\uZZZZ",
                                                          "\\U00e9",
                                                          "\\x41",
                                                          "\\'",
                                                          "\\a",
                                                          "\\",
                                                          "\\\\\\",
                                                          "\x01",
                                                          "\x1f",
                                                          "\t",
                                                          "\x7f",
                                                          "caf\xc3\xa9",
                                                          "\xf0\x9f\x98\x80",
                                                          "\xe2\x82\xac",
                                                          "\xff",
                                                          "\xc0\x80",
                                                          "\xc1\xbf",
                                                          "\xed\xa0\x80",
                                                          "\xf4\x90\x80\x80",
                                                          "\xe2\x82",
                                                          "\xf0\x9f\x98",
                                                          "\x80",
                                                          "\xf5\x80\x80\x80",
                                                          "\xe0\x9f\xbf",
                                                          "\xef\xbf\xbf",
                                                          "\xf4\x8f\xbf\xbf",
                                                          "\"",
                                                          "a\"b",
                                                          "\\\"\"",
                                                          "",
                                                          std::string("nul\0x", 5)})
    variants.push_back(replaced("\"text\":\" tok\"", "\"text\":\"" + text + "\""));
  // Keys and structure.
  for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"text\"", "\"txt\""},
           {"\"text\"", "\"te\\u0078t\""},
           {"\"text\"", "\"Text\""},
           {"\"text\":\" tok\"", "\"text\":null"},
           {"\"text\":\" tok\"", "\"text\":5"},
           {"\"text\":\" tok\"", "\"text\":\" tok\",\"text\":\" again\""},
           {"\"text\":\" tok\"", "\"delta\":{\"content\":\" tok\"}"},
           {"\"index\":0,", ""},
           {"\"index\":0", "\"index\":0,\"extra\":[1,{\"a\":null}]"},
           {"\"choices\":[{", "\"choices\":[{\"x\":1},{"},
           {"\"choices\":[", "\"choices\":[],\"choices\":["},
           {"\"usage\":{", "\"usage\":null,\"other\":{"},
           {"\"usage\":{\"prompt_tokens\":1024", "\"usage\":{\"prompt_tokens\":null"},
           {"\"prompt_tokens\":1024", "\"prompt_tokens\":\"1024\""},
           {"\"completion_tokens\":3", "\"completion_tokens\":3,\"completion_tokens\":4"},
           {"\"logprobs\":null", "\"logprobs\":nul"},
           {"\"logprobs\":null", "\"logprobs\":true"},
           {"\"logprobs\":null", "\"logprobs\":nullx"},
           {"\"logprobs\":null,", "\"logprobs\":null,,"},
           {"\"model\":\"", "\"model\": \""},
           {"{\"id\"", " {\"id\""},
           {"\"finish_reason\":null", "\"finish_reason\":\"stop\""},
           {"\"finish_reason\":null", "\"finish_reason\":\"length\""},
           {"\"finish_reason\":null", "\"finish_reason\":0"},
           {"\"finish_reason\":null", "\"finish_reason\":false"},
           {"\"stop_reason\":null", "\"stop_reason\":null,\"error\":null"},
           {"\"id\":", "\"error\":null,\"id\":"},
           {"\"id\":", "\"error\":\"boom\",\"id\":"},
           {"\"id\":", "\"error\":{\"message\":\"boom\"},\"id\":"},
           {"\"id\":", "\"error\":{\"code\":1},\"id\":"},
           {"\"id\":\"cmpl-", "\"id\":\"cmpl-x"},
       }) {
    variants.push_back(replaced(from, to));
  }
  // Numbers: the counts (read) and the others (skipped), with signs, exponents, leading zeros,
  // fractions, overflow.
  for (std::string number : {"0",
                             "-0",
                             "-1",
                             "+1",
                             "01",
                             "00",
                             "1e2",
                             "1E+2",
                             "1.0",
                             "1.",
                             ".5",
                             "-",
                             "1e",
                             "1e-",
                             "123456789012345678",
                             "1234567890123456789",
                             "99999999999999999999",
                             "2147483648",
                             "0x1",
                             "1_0",
                             "١"}) {
    variants.push_back(replaced("\"completion_tokens\":3", "\"completion_tokens\":" + number));
    variants.push_back(replaced("\"prompt_tokens\":1024", "\"prompt_tokens\":" + number));
    variants.push_back(replaced("\"total_tokens\":1027", "\"total_tokens\":" + number));
    variants.push_back(replaced("\"created\":1712345678", "\"created\":" + number));
    variants.push_back(replaced("\"index\":0", "\"index\":" + number));
  }
  // Truncated, and with extra bytes after the object.
  for (size_t cut = 1; cut < base.size(); cut += 7) variants.push_back(base.substr(0, cut));
  for (std::string extra : {"x", " ", "\t", "}", "{}", "]", ",", " 1", "\"\"", "\xff"})
    variants.push_back(base + extra);

  size_t variant_hits = 0;
  for (const std::string& variant : variants) {
    // " z" is parsed in full, " a" teaches the template, " b" reads through it.
    std::vector<std::string> events = {vllm_completion_event(" z", 1),
                                       vllm_completion_event(" a", 1),
                                       vllm_completion_event(" b", 2),
                                       variant,
                                       vllm_completion_event(" c", 4, "stop"),
                                       usage_event(1024, 4),
                                       "[DONE]"};
    // One event per read and all in one read.
    for (size_t per_feed : {size_t{1}, size_t{16}}) {
      uint64_t hits = expect_fast_path_changes_nothing(events, "variant: " + variant, per_feed);
      EXPECT_GE(hits, 1u) << variant;  // the template was there for the variant
    }
    std::vector<std::string> prefix(events.begin(), events.begin() + 4);
    variant_hits += read_events(prefix, true).hits - 1;
  }
  // Many variants are valid and must still take the fast path (escapes, UTF-8, numbers).
  EXPECT_GE(variant_hits, 40u);
}

// Byte flips, insertions and deletions in real events: the record is the full parse's.
TEST(StreamReaderTemplate, RandomMutationsGiveTheFullParseResult) {
  std::mt19937_64 random(20240611);
  const EventMaker makers[] = {vllm_completion_event, vllm_chat_event, sglang_chat_event,
                               floor_event};
  // Bytes that matter to JSON, to the hole scanners and to UTF-8, and any byte.
  const std::string interesting = std::string("{}[]:,\"\\/ubfnrtu0123456789-+.eE aZ\x01\x1f\x7f") +
                                  "\x80\xbf\xc2\xdf\xe0\xed\xef\xf0\xf4\xff" +
                                  "0123456789abcdefghijklmnopqrstuvwxyz";
  auto random_byte = [&]() -> char {
    return random() % 3 == 0 ? static_cast<char>(random() % 256)
                             : interesting[random() % interesting.size()];
  };
  size_t mutated_hits = 0;
  constexpr int kMutations = 3000;
  for (int round = 0; round < kMutations; ++round) {
    EventMaker make = makers[random() % 4];
    std::vector<std::string> events;
    const std::vector<std::string>& texts = token_texts();
    for (int i = 1; i <= 5; ++i)
      events.push_back(make(texts[random() % texts.size()], i, i == 5 ? "stop" : nullptr));
    events.push_back("[DONE]");
    // Mostly a later event (the template is there), sometimes the one it is learned from.
    size_t target = random() % 4 == 0 ? 0 : 2;
    std::string& event = events[target];
    for (int edits = 1 + static_cast<int>(random() % 3); edits > 0; --edits) {
      // A third of the edits land anywhere, a third in the token text, a third on a digit:
      // edits in the holes often leave a valid event, which the fast path must then read.
      size_t at = random() % event.size();
      const int focus = static_cast<int>(random() % 3);
      if (focus == 1) {
        size_t text = event.find("\"text\":\"");
        text = text != std::string::npos ? text + 8 : event.find("\"content\":\"") + 11;
        at = text + random() % 8;
      } else if (focus == 2) {
        for (size_t tries = 0; tries < 64 && !(event[at] >= '0' && event[at] <= '9'); ++tries)
          at = random() % event.size();
      }
      at = std::min(at, event.size() - 1);
      switch (random() % 3) {
        case 0:
          event[at] = random_byte();
          break;
        case 1:
          event.insert(event.begin() + static_cast<std::ptrdiff_t>(at), random_byte());
          break;
        default:
          event.erase(at, 1);
          break;
      }
    }
    std::string context = "round " + std::to_string(round) + ", event " + event;
    expect_fast_path_changes_nothing(events, context, 1 + random() % 6);
    if (target == 2) {
      std::vector<std::string> prefix(events.begin(), events.begin() + 4);
      uint64_t hits = read_events(prefix, true).hits;
      FastRun unmutated = read_events({events[0], events[1]}, true);
      mutated_hits += hits - unmutated.hits;
    }
    if (HasFailure()) break;  // one mutation's report is enough
  }
  // Some mutations keep the event valid in the holes; those must have been read fast.
  EXPECT_GE(mutated_hits, 100u);
}

}  // namespace
}  // namespace servebench::client::detail
