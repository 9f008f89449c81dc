// The --trace-out ground truth written for each request.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include "sim/server_test_client.h"

namespace servebench::sim {
namespace {

using nlohmann::json;

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

std::vector<json> trace_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  return lines;
}

// Defect (issue 19): max_tokens 2^63 - 1 overflowed prompt + max_tokens past the context check;
// the 400 said "max_tokens=-1", and with the trace on, vector::reserve threw std::length_error
// and the process aborted with the trace lost.
// A step that ends one stream and carries another's token: the token goes out before the
// ended stream's closing events (IoThread::on_tokens_due), whose end_ns is stamped then.
TEST(SimServerTrace, AStepsTokensGoOutBeforeTheClosingEventsOfStreamsItEnds) {
  std::string path = ::testing::TempDir() + "sim_trace_order_test.jsonl";
  Options o = fast_options();
  o.trace_out = path;
  o.mode = Options::Mode::kEngine;
  o.engine.step_overhead_us = 200000;  // the second request arrives during the first step
  o.engine.per_prefill_token_us = 0;
  o.engine.per_decode_seq_us = 0;
  o.engine.per_context_token_us = 0;
  {
    Server s(o);
    s.start();
    // Two 2-token streams: the first to arrive gets tokens at steps 1 and 2, the other
    // (joining step 2) at steps 2 and 3. Step 2 ends the first and starts the second.
    RawClient a(s.port()), b(s.port());
    a.send_request("POST", "/v1/completions", completion_body(2, true), "x-request-id: a\r\n");
    b.send_request("POST", "/v1/completions", completion_body(2, true), "x-request-id: b\r\n");
    EXPECT_EQ(a.read_response().status, 200);
    EXPECT_EQ(b.read_response().status, 200);
    s.stop();
  }
  std::ifstream in(path);
  std::vector<json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  auto due = [&](size_t i) { return lines[i]["due_ns"].get<std::vector<int64_t>>(); };
  const size_t first = due(0)[0] < due(1)[0] ? 0 : 1;
  const json& ended = lines[first];
  const json& other = lines[1 - first];
  ASSERT_EQ(due(first)[1], due(1 - first)[0]);  // due in one step
  EXPECT_GE(ended["end_ns"].get<int64_t>(), other["sent_ns"][0].get<int64_t>());
}

TEST(SimServerTrace, HugeMaxTokensIsRefusedAndTraced) {
  std::string path = ::testing::TempDir() + "sim_trace_huge_max_tokens.jsonl";
  Options o = fast_options();
  o.trace_out = path;
  {
    Server s(o);
    s.start();
    RawClient c(s.port());
    Response r =
        c.request("POST", "/v1/completions",
                  R"({"model":"sim-model","prompt":"a b","max_tokens":9223372036854775807,)"
                  R"("min_tokens":1,"stream":true})");
    EXPECT_EQ(r.status, 400);
    EXPECT_NE(r.body.find("too large: 9223372036854775807"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("=-1"), std::string::npos) << r.body;
    EXPECT_EQ(c.request("POST", "/v1/completions", completion_body(2, true)).status, 200);
    s.stop();
  }
  std::vector<json> lines = trace_lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["outcome"], "rejected");
  EXPECT_EQ(lines[0]["status"], 400);
  EXPECT_EQ(lines[1]["outcome"], "ok");
  std::filesystem::remove(path);
}

// Defect (issue 19): a client that never read had its whole answer buffered without bound while
// the trace said "ok", on time. Now the buffer is bounded, the stream is reset, and the trace
// says "client_not_reading".
TEST(SimServerTrace, ClientThatDoesNotReadIsCutOffAndTraced) {
  std::string path = ::testing::TempDir() + "sim_trace_not_reading.jsonl";
  Options o = fast_options();
  o.trace_out = path;
  o.fixed.itl = {0.001, 0};
  o.max_model_len = 200'000;
  o.max_output_buffer_bytes = 256 << 10;
  {
    Server s(o);
    s.start();
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;  // before connect: no window autotuning
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(s.port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    std::string body = completion_body(150'000, true);
    std::string req =
        "POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: "
        "application/json\r\ncontent-length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
    // Never read. The model's tokens are all due within ~0.2 s; without the bound the stream
    // ends "ok" with everything buffered, with it much sooner. A stream still open at stop()
    // would be traced "server_stopped".
    std::this_thread::sleep_for(std::chrono::seconds(2));
    s.stop();
    ::close(fd);
    std::vector<json> lines = trace_lines(path);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0]["outcome"], "client_not_reading");
    EXPECT_LT(lines[0]["tokens_sent"].get<int>(), 150'000);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace servebench::sim
