#include "client/http1_response.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace servebench::client::detail {
namespace {

using Progress = Http1Response::Progress;

struct Collected final : ResponseSink {
  std::vector<int> statuses;
  std::string body;
  void on_status(int status) override { statuses.push_back(status); }
  void on_body(const char* data, size_t length) override { body.append(data, length); }
};

struct Outcome {
  Progress progress = Progress::kNeedMore;
  size_t consumed = 0;  // of the whole input
  Collected sink;
};

// Feeds `input` in pieces of `piece` bytes (the last may be shorter), stopping at the end of
// the response.
Outcome feed_in_pieces(Http1Response& response, const std::string& input, size_t piece) {
  Outcome outcome;
  response.reset();
  for (size_t offset = 0; offset < input.size(); offset += piece) {
    size_t length = std::min(piece, input.size() - offset);
    size_t consumed = 0;
    outcome.progress = response.feed(input.data() + offset, length, outcome.sink, &consumed);
    outcome.consumed += consumed;
    if (outcome.progress != Progress::kNeedMore) break;
  }
  return outcome;
}

const std::string kChunkedSse =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\n"
    "Transfer-Encoding: chunked\r\n"
    "\r\n"
    "F\r\ndata: {\"a\":1}\n\n\r\n"
    "e;ext=1\r\ndata: [DONE]\r\n"
    "\r\n"
    "0\r\n"
    "Trailer-Field: x\r\n"
    "\r\n";

TEST(Http1Response, ChunkedBodyIsTheSameWhateverTheReadSizes) {
  for (size_t piece : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, size_t{64}, size_t{4096}}) {
    Http1Response response;
    Outcome outcome = feed_in_pieces(response, kChunkedSse, piece);
    EXPECT_EQ(outcome.progress, Progress::kComplete) << "piece " << piece;
    EXPECT_EQ(outcome.consumed, kChunkedSse.size()) << "piece " << piece;
    EXPECT_EQ(outcome.sink.statuses, std::vector<int>{200});
    EXPECT_EQ(outcome.sink.body, "data: {\"a\":1}\n\ndata: [DONE]\r\n") << "piece " << piece;
    EXPECT_TRUE(response.keep_alive());
    EXPECT_EQ(response.body_bytes(), 29u);
  }
}

// Many chunks per read take the whole-chunk path; chunks split across reads, extensions,
// leading zeros, upper- and lower-case digits and a bare LF line end take the byte-at-a-time
// path. Both must give the same body whatever the read sizes.
TEST(Http1Response, ManyChunksGiveTheSameBodyOnEitherPath) {
  std::string input = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::string expected;
  const char* const kSizeFormats[] = {"%zx", "%zX", "00%zx", "%zx;e=1", "%zx"};
  for (size_t i = 0; i < 60; ++i) {
    const size_t size = 1 + (i * 37) % 300;
    std::string data(size, static_cast<char>('a' + i % 26));
    data.back() = '\n';
    char line[32];
    std::snprintf(line, sizeof line, kSizeFormats[i % 5], size);
    input += line;
    input += i % 11 == 10 ? "\n" : "\r\n";
    input += data + "\r\n";
    expected += data;
  }
  input += "0\r\n\r\n";
  for (size_t piece : {size_t{1}, size_t{5}, size_t{97}, size_t{1000}, input.size()}) {
    Http1Response response;
    Outcome outcome = feed_in_pieces(response, input, piece);
    EXPECT_EQ(outcome.progress, Progress::kComplete) << "piece " << piece;
    EXPECT_EQ(outcome.consumed, input.size()) << "piece " << piece;
    EXPECT_EQ(outcome.sink.body, expected) << "piece " << piece;
    EXPECT_EQ(response.body_bytes(), expected.size()) << "piece " << piece;
  }
}

TEST(Http1Response, ContentLengthBodyStopsAtItsLength) {
  const std::string input =
      "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 5\r\n\r\nboom!HTTP/1.1 200 OK";
  Http1Response response;
  Outcome outcome = feed_in_pieces(response, input, input.size());
  EXPECT_EQ(outcome.progress, Progress::kComplete);
  EXPECT_EQ(outcome.sink.body, "boom!");
  EXPECT_EQ(outcome.consumed, input.find("boom!") + 5);  // the next bytes are not this response's
  EXPECT_EQ(response.status(), 500);
}

TEST(Http1Response, BodyWithoutLengthRunsToTheClose) {
  const std::string input = "HTTP/1.1 200 OK\r\n\r\ndata: x\n\n";
  Http1Response response;
  Outcome outcome = feed_in_pieces(response, input, 5);
  EXPECT_EQ(outcome.progress, Progress::kNeedMore);
  EXPECT_FALSE(response.keep_alive());
  EXPECT_EQ(response.end_of_stream(), Progress::kComplete);
  EXPECT_EQ(outcome.sink.body, "data: x\n\n");
}

TEST(Http1Response, InterimHeadsAreSkipped) {
  const std::string input =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  for (size_t piece : {size_t{1}, size_t{input.size()}}) {
    Http1Response response;
    Outcome outcome = feed_in_pieces(response, input, piece);
    EXPECT_EQ(outcome.progress, Progress::kComplete);
    EXPECT_EQ(outcome.sink.statuses, std::vector<int>{200});
    EXPECT_EQ(outcome.sink.body, "ok");
  }
}

TEST(Http1Response, ConnectionReuseFollowsVersionAndHeader) {
  struct Case {
    std::string head;
    bool keep_alive;
  };
  for (const Case& c : std::vector<Case>{
           {"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true},
           {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false},
           {"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false},
           {"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", true},
           {"HTTP/1.1 204 No Content\n\n", true},  // bare LF line ends are accepted
       }) {
    Http1Response response;
    Outcome outcome = feed_in_pieces(response, c.head, c.head.size());
    EXPECT_EQ(outcome.progress, Progress::kComplete) << c.head;
    EXPECT_EQ(response.keep_alive(), c.keep_alive) << c.head;
  }
}

TEST(Http1Response, MalformedResponsesNameWhatIsWrong) {
  struct Case {
    std::string input;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"SSH-2.0-OpenSSH_9.2\r\n\r\n", "bad status line 'SSH-2.0-OpenSSH_9.2'"},
           {"HTTP/1.1 2x0 OK\r\n\r\n", "bad status line 'HTTP/1.1 2x0 OK'"},
           {"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "header line without ':' 'no colon here'"},
           {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "bad Content-Length '6'"},
           {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length '-1'"},
           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "bad byte in a chunk size (122)"},
           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
            "chunk data not followed by CRLF"},
           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "chunk without a size"},
           {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n",
            "chunk size of more than 15 hex digits"},
           {"HTTP/1.1 101 Switching Protocols\r\n\r\n", "unexpected 101 Switching Protocols"},
       }) {
    Http1Response response;
    Outcome outcome = feed_in_pieces(response, c.input, c.input.size());
    EXPECT_EQ(outcome.progress, Progress::kMalformed) << c.input;
    EXPECT_EQ(response.error(), c.error) << c.input;
    EXPECT_FALSE(response.keep_alive());
  }
}

TEST(Http1Response, HeadLargerThanTheLimitIsMalformed) {
  std::string input = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(70 * 1024, 'a');
  Http1Response response;
  Outcome outcome = feed_in_pieces(response, input, 1000);
  EXPECT_EQ(outcome.progress, Progress::kMalformed);
  EXPECT_EQ(response.error(), "response head larger than 64 KiB");
}

TEST(Http1Response, CloseBeforeTheEndSaysWhereItStopped) {
  Http1Response response;
  Collected sink;
  size_t consumed = 0;
  response.reset();
  EXPECT_EQ(response.end_of_stream(), Progress::kMalformed);
  EXPECT_EQ(response.error(), "the server closed the connection without a response");

  response.reset();
  std::string partial_head = "HTTP/1.1 200 OK\r\nContent-Ty";
  response.feed(partial_head.data(), partial_head.size(), sink, &consumed);
  EXPECT_EQ(response.end_of_stream(), Progress::kMalformed);
  EXPECT_EQ(response.error(), "the server closed the connection in the response head");

  response.reset();
  std::string mid_chunk = kChunkedSse.substr(0, kChunkedSse.find("e;ext"));
  EXPECT_EQ(response.feed(mid_chunk.data(), mid_chunk.size(), sink, &consumed),
            Progress::kNeedMore);
  EXPECT_EQ(response.end_of_stream(), Progress::kMalformed);
  EXPECT_EQ(response.error(),
            "the server closed the connection before the response ended (15 body bytes "
            "received)");
}

TEST(Http1Response, ResetAllowsTheNextResponseOnTheConnection) {
  Http1Response response;
  Outcome first = feed_in_pieces(response, kChunkedSse, 9);
  ASSERT_EQ(first.progress, Progress::kComplete);
  const std::string second = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnah";
  Outcome outcome = feed_in_pieces(response, second, 4);
  EXPECT_EQ(outcome.progress, Progress::kComplete);
  EXPECT_EQ(outcome.sink.statuses, std::vector<int>{404});
  EXPECT_EQ(outcome.sink.body, "nah");
}

}  // namespace
}  // namespace servebench::client::detail
