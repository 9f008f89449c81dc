#include "client/http1_response.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace servebench::client::detail {

namespace {

// A head this large is not a server we understand (curl allows 300 KB; real servers send < 1 KB).
constexpr size_t kMaxHeadBytes = 64 * 1024;
constexpr int kMaxChunkSizeDigits = 15;  // < 2^60 bytes: no overflow

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

// Whether the comma-separated list `value` holds `token` (case-insensitive); `last` asks for
// the last element only (Transfer-Encoding: the final coding decides the framing).
bool has_token(std::string_view value, std::string_view token, bool last = false) {
  bool found = false;
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view item = trim(value.substr(0, comma));
    found = equals_ignoring_case(item, token) || (found && !last);
    if (found && !last) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return found;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

void Http1Response::reset() {
  state_ = State::kHead;
  head_.clear();
  head_scanned_ = 0;
  status_ = 0;
  keep_alive_ = true;
  remaining_ = 0;
  body_bytes_ = 0;
  chunk_size_digits_ = 0;
  trailer_line_empty_ = true;
  error_.clear();
}

Http1Response::Progress Http1Response::fail(std::string message) {
  state_ = State::kFailed;
  keep_alive_ = false;
  error_ = std::move(message);
  return Progress::kMalformed;
}

Http1Response::Progress Http1Response::feed(const char* data, size_t length, ResponseSink& sink,
                                            size_t* consumed) {
  size_t offset = 0;
  while (offset < length && state_ != State::kDone && state_ != State::kFailed) {
    const char* at = data + offset;
    size_t left = length - offset;
    switch (state_) {
      case State::kHead:
        offset += feed_head(at, left, sink);
        break;
      case State::kLengthBody:
        offset += pass_body(at, left, sink);
        if (remaining_ == 0) state_ = State::kDone;
        break;
      case State::kUntilClose:
        sink.on_body(at, left);
        body_bytes_ += left;
        offset = length;
        break;
      default:
        offset += feed_chunked(at, left, sink);
        break;
    }
  }
  *consumed = offset;
  if (state_ == State::kFailed) return Progress::kMalformed;
  return state_ == State::kDone ? Progress::kComplete : Progress::kNeedMore;
}

size_t Http1Response::pass_body(const char* data, size_t available, ResponseSink& sink) {
  size_t take = static_cast<size_t>(std::min<uint64_t>(remaining_, available));
  sink.on_body(data, take);
  body_bytes_ += take;
  remaining_ -= take;
  return take;
}

size_t Http1Response::feed_head(const char* data, size_t length, ResponseSink& sink) {
  size_t before = head_.size();
  head_.append(data, std::min(length, kMaxHeadBytes + 1 - std::min(before, kMaxHeadBytes)));
  // The head ends at an empty line: "\n\n" or "\n\r\n".
  size_t end = std::string::npos;
  for (size_t i = head_scanned_; i < head_.size(); ++i) {
    const void* found = std::memchr(head_.data() + i, '\n', head_.size() - i);
    if (found == nullptr) break;
    i = static_cast<size_t>(static_cast<const char*>(found) - head_.data());
    if ((i >= 1 && head_[i - 1] == '\n') ||
        (i >= 2 && head_[i - 1] == '\r' && head_[i - 2] == '\n')) {
      end = i + 1;
      break;
    }
  }
  if (end == std::string::npos) {
    head_scanned_ = head_.size() >= 2 ? head_.size() - 2 : 0;
    if (head_.size() > kMaxHeadBytes) fail("response head larger than 64 KiB");
    return length;
  }
  size_t used = end - before;  // bytes of this call that belong to the head
  head_.resize(end);
  parse_head(sink);
  return used;
}

void Http1Response::parse_head(ResponseSink& sink) {
  std::string_view head = head_;
  size_t line_end = head.find('\n');
  std::string_view status_line = trim(head.substr(0, line_end));
  // "HTTP/1.1 200 OK"
  if (status_line.size() < 12 || status_line.substr(0, 7) != "HTTP/1." || status_line[8] != ' ') {
    fail("bad status line '" + std::string(status_line.substr(0, 40)) + "'");
    return;
  }
  int status = 0;
  auto [end, error] = std::from_chars(status_line.data() + 9, status_line.data() + 12, status);
  if (error != std::errc() || end != status_line.data() + 12 || status < 100 || status > 999) {
    fail("bad status line '" + std::string(status_line.substr(0, 40)) + "'");
    return;
  }
  bool http10 = status_line[7] == '0';

  bool chunked = false, has_transfer_encoding = false, has_length = false;
  bool connection_close = false, connection_keep_alive = false;
  uint64_t content_length = 0;
  head.remove_prefix(line_end + 1);
  while (!head.empty()) {
    size_t next = head.find('\n');
    std::string_view line = head.substr(0, next);
    head.remove_prefix(next == std::string_view::npos ? head.size() : next + 1);
    if (trim(line).empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      fail("header line without ':' '" + std::string(trim(line).substr(0, 40)) + "'");
      return;
    }
    std::string_view name = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (equals_ignoring_case(name, "content-length")) {
      uint64_t parsed = 0;
      auto [at, parse_error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
      if (parse_error != std::errc() || at != value.data() + value.size() ||
          (has_length && parsed != content_length)) {
        fail("bad Content-Length '" + std::string(value.substr(0, 40)) + "'");
        return;
      }
      has_length = true;
      content_length = parsed;
    } else if (equals_ignoring_case(name, "transfer-encoding")) {
      has_transfer_encoding = true;
      chunked = has_token(value, "chunked", /*last=*/true);
    } else if (equals_ignoring_case(name, "connection")) {
      connection_close = connection_close || has_token(value, "close");
      connection_keep_alive = connection_keep_alive || has_token(value, "keep-alive");
    }
  }

  if (status < 200) {
    if (status == 101) {
      fail("unexpected 101 Switching Protocols");
      return;
    }
    head_.clear();  // an interim response: the real head follows
    head_scanned_ = 0;
    return;
  }
  status_ = status;
  keep_alive_ = !connection_close && (!http10 || connection_keep_alive);
  sink.on_status(status);
  if (status == 204 || status == 304) {
    state_ = State::kDone;
  } else if (chunked) {
    state_ = State::kChunkSize;
    remaining_ = 0;
    chunk_size_digits_ = 0;
  } else if (has_length && !has_transfer_encoding) {
    remaining_ = content_length;
    state_ = content_length == 0 ? State::kDone : State::kLengthBody;
  } else {
    state_ = State::kUntilClose;  // RFC 9112 §6.3: read until the server closes
    keep_alive_ = false;
  }
}

size_t Http1Response::feed_whole_chunks(const char* data, size_t length, ResponseSink& sink) {
  size_t offset = 0;
  for (;;) {
    size_t at = offset;
    uint64_t size = 0;
    int digits = 0;
    for (; at < length && digits <= kMaxChunkSizeDigits; ++at, ++digits) {
      const int digit = hex_digit(data[at]);
      if (digit < 0) break;
      size = size * 16 + static_cast<uint64_t>(digit);
    }
    if (digits == 0 || digits > kMaxChunkSizeDigits || size == 0) return offset;
    if (length - at < 2 || data[at] != '\r' || data[at + 1] != '\n') return offset;
    at += 2;
    if (length - at < size + 2 || data[at + size] != '\r' || data[at + size + 1] != '\n')
      return offset;
    sink.on_body(data + at, static_cast<size_t>(size));
    body_bytes_ += size;
    offset = static_cast<size_t>(at + size + 2);
  }
}

size_t Http1Response::feed_chunked(const char* data, size_t length, ResponseSink& sink) {
  size_t offset = 0;
  auto end_of_size_line = [&] {
    if (chunk_size_digits_ == 0) {
      fail("chunk without a size");
      return;
    }
    chunk_size_digits_ = 0;
    if (remaining_ == 0) {
      state_ = State::kTrailer;
      trailer_line_empty_ = true;
    } else {
      state_ = State::kChunkData;
    }
  };
  while (offset < length && state_ != State::kDone && state_ != State::kFailed) {
    if (state_ == State::kChunkSize && chunk_size_digits_ == 0) {
      offset += feed_whole_chunks(data + offset, length - offset, sink);
      if (offset == length) break;
    }
    char c = data[offset];
    switch (state_) {
      case State::kChunkSize: {
        int digit = hex_digit(c);
        ++offset;
        if (digit >= 0) {
          if (++chunk_size_digits_ > kMaxChunkSizeDigits) {
            fail("chunk size of more than 15 hex digits");
            return offset;
          }
          remaining_ = remaining_ * 16 + static_cast<uint64_t>(digit);
        } else if (c == '\n') {
          end_of_size_line();
        } else if (c == ';' || c == ' ' || c == '\t' || c == '\r') {
          state_ = State::kChunkExtension;
        } else {
          fail("bad byte in a chunk size (" + std::to_string(static_cast<unsigned char>(c)) + ")");
        }
        break;
      }
      case State::kChunkExtension: {
        const void* newline = std::memchr(data + offset, '\n', length - offset);
        if (newline == nullptr) return length;
        offset = static_cast<size_t>(static_cast<const char*>(newline) - data) + 1;
        end_of_size_line();
        break;
      }
      case State::kChunkData:
        offset += pass_body(data + offset, length - offset, sink);
        if (remaining_ == 0) state_ = State::kChunkDataEnd;
        break;
      case State::kChunkDataEnd:
        ++offset;
        if (c == '\n') {
          state_ = State::kChunkSize;
        } else if (c != '\r') {
          fail("chunk data not followed by CRLF");
        }
        break;
      case State::kTrailer:
        ++offset;
        if (c == '\n') {
          if (trailer_line_empty_) state_ = State::kDone;
          trailer_line_empty_ = true;
        } else if (c != '\r') {
          trailer_line_empty_ = false;
        }
        break;
      default:
        return offset;
    }
  }
  return offset;
}

Http1Response::Progress Http1Response::end_of_stream() {
  switch (state_) {
    case State::kDone:
      return Progress::kComplete;
    case State::kUntilClose:
      state_ = State::kDone;
      return Progress::kComplete;
    case State::kFailed:
      return Progress::kMalformed;
    case State::kHead:
      return fail(head_.empty() ? "the server closed the connection without a response"
                                : "the server closed the connection in the response head");
    default:
      return fail("the server closed the connection before the response ended (" +
                  std::to_string(body_bytes_) + " body bytes received)");
  }
}

}  // namespace servebench::client::detail
