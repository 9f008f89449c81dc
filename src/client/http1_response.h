// File: client/http1_response.h (internal to the client part)
// An incremental parser of one HTTP/1.1 response, for the client's own plain-HTTP transport:
// bytes go in as they are read, in pieces of any size; the status is reported once the head is
// complete (interim 1xx heads are skipped), and body bytes are handed on already de-chunked.
// Bodies are chunked (RFC 9112 §7.1, extensions and trailers ignored), Content-Length, or
// delimited by the close of the connection. Nothing is copied but the head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace servebench::client::detail {

class ResponseSink {
 public:
  virtual void on_status(int status) = 0;
  virtual void on_body(const char* data, size_t length) = 0;

 protected:
  ~ResponseSink() = default;
};

class Http1Response {
 public:
  enum class Progress { kNeedMore, kComplete, kMalformed };

  // Ready for the next response on the connection.
  void reset();
  // Consumes bytes up to the end of the response; *consumed tells how many (fewer than
  // `length` only when the response completed before the end of the data).
  Progress feed(const char* data, size_t length, ResponseSink& sink, size_t* consumed);
  // The peer closed the connection: kComplete when the body ran to the close, else kMalformed
  // with error() saying what was missing.
  Progress end_of_stream();

  bool head_complete() const { return state_ > State::kHead; }
  int status() const { return status_; }
  // Whether the connection may carry another request after this response.
  bool keep_alive() const { return keep_alive_; }
  uint64_t body_bytes() const { return body_bytes_; }
  const std::string& error() const { return error_; }

 private:
  enum class State {
    kHead,
    kChunkSize,
    kChunkExtension,
    kChunkData,
    kChunkDataEnd,
    kTrailer,
    kLengthBody,
    kUntilClose,
    kDone,
    kFailed,
  };

  Progress fail(std::string message);
  // Parses the head in head_; chooses the body framing (or fails).
  void parse_head(ResponseSink& sink);
  size_t feed_head(const char* data, size_t length, ResponseSink& sink);
  size_t feed_chunked(const char* data, size_t length, ResponseSink& sink);
  // The usual case, from the start of a chunk-size line: whole "<hex>\r\n<data>\r\n" chunks
  // passed on without the byte-at-a-time states (a chunk split across reads, an extension, the
  // last chunk or anything odd is left to feed_chunked). Returns the bytes used.
  size_t feed_whole_chunks(const char* data, size_t length, ResponseSink& sink);
  // Hands on up to remaining_ body bytes; returns how many.
  size_t pass_body(const char* data, size_t available, ResponseSink& sink);

  State state_ = State::kHead;
  std::string head_;
  size_t head_scanned_ = 0;  // head_ bytes already searched for the blank line
  int status_ = 0;
  bool keep_alive_ = true;
  uint64_t remaining_ = 0;  // bytes left of a chunk or of a Content-Length body
  uint64_t body_bytes_ = 0;
  int chunk_size_digits_ = 0;
  bool trailer_line_empty_ = true;
  std::string error_;
};

}  // namespace servebench::client::detail
