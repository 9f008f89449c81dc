// File: client/transport.h (internal to the client part)
// How an event loop moves requests over the network. The loop decides *when* (pacing,
// concurrency slots, stop and drain) and turns finished exchanges into records; a Transport
// decides *how*: it registers its sockets in the loop's epoll set, writes requests, reads
// responses and feeds body bytes to each exchange's StreamReader.
//   - the curl transport (curl_transport.cpp): libcurl's multi-socket API, for https (TLS,
//     HTTP/2) and for anyone who asks for it;
//   - the HTTP/1.1 transport (http1_transport.cpp): plain http:// on our own sockets, one recv
//     per readiness event and no per-read poll(), which libcurl 7.88 does (docs/performance.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/request_body.h"
#include "client/sse_stream.h"
#include "record/record.h"

namespace servebench::client::detail {

struct LoopStats;

// One planned request with everything built before t0 (a conversation's later turn: built when
// the previous turn ends, from its history).
struct Prepared {
  const PlannedRequest* plan = nullptr;
  RequestBody body;
  std::string request_id;
  std::string request_id_header;  // "x-request-id: <id>"
  int64_t intended_ns = 0;        // plan->intended_ns, or for a later turn the previous's done_ns
  int32_t prompt_tokens = 0;      // plan->prompt_tokens, plus the history's for a later turn
  Prepared* next_turn = nullptr;  // the conversation's next turn, if any
  std::vector<HistoryTurn> history;  // a later turn's earlier turns (moved along the chain)
};

// One request in flight (or idle in the loop's pool, ready for the next). Transports derive
// from it to keep their per-request state beside the record.
struct Exchange {
  explicit Exchange(ParseScratch* scratch) : reader(scratch) {}
  virtual ~Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  Prepared* request = nullptr;
  record::RequestRecord record;
  StreamReader reader;
  std::string error_body;  // the start of a non-200 body, for the error message
  int status = 0;          // HTTP status, 0 until the head arrived
  bool body_started = false;
  bool sent_with_usage_stats = false;
  bool active = false;

  // Response body bytes that arrived at `now_ns` (after t0): a 200's go to the SSE reader,
  // another status's are kept for its error message.
  void on_body(const char* data, size_t length, int64_t now_ns);
};

// What a transport needs from its loop.
struct TransportContext {
  const Endpoint* endpoint = nullptr;
  int epoll_fd = -1;
  int64_t t0_ns = 0;  // set when the run starts
  LoopStats* stats = nullptr;
  // Most requests in flight at once, to size connection caches and buffers; capped by
  // --max-concurrency (else by the plan size and the open-files limit).
  long max_connections = 1;
  bool connections_capped = false;
  // Stamp arrivals with the kernel's receive time where the transport can (RunOptions).
  bool kernel_timestamps = false;
  // The exchange ended: cleanly when `transport_error` is empty (its status says how), else with
  // a "transport: …" message. Called only from on_ready, on_time and collect.
  std::function<void(Exchange&, std::string transport_error)> finished;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::unique_ptr<Exchange> make_exchange(ParseScratch* scratch) = 0;
  // Begins sending the exchange's request (its record's sent_ns is already stamped). Never
  // reports the end from inside: a failure shows in the next collect().
  virtual void start(Exchange& exchange) = 0;
  // A socket of this transport (epoll data `tag`) is ready with `events`.
  virtual void on_ready(uint64_t tag, uint32_t events) = 0;
  // Runs whatever timeouts are due at `now_ns` (absolute).
  virtual void on_time(int64_t now_ns) = 0;
  // Reports exchanges that ended outside on_ready/on_time.
  virtual void collect() = 0;
  // When on_time or collect next has work (absolute ns; <= now for at once), -1 for never.
  virtual int64_t next_deadline_ns() = 0;
  // Drops an active exchange without reporting it (stop's drain timeout, shutdown).
  virtual void abort(Exchange& exchange) = 0;
  // on_ready(tag, …) follows soon: the loop calls this for every socket of a batch first, so
  // that the cache misses on their state overlap instead of coming one after another (with
  // hundreds of streams, each socket's state has left the cache since its last event).
  virtual void prefetch(uint64_t /*tag*/) const {}
  // Whether start() would send on a connection already open (no connect): the loop then sends
  // a request that fell due in the middle of a batch of ready sockets at once.
  virtual bool has_idle_connection() const { return false; }
};

std::unique_ptr<Transport> make_curl_transport(TransportContext& context);
std::unique_ptr<Transport> make_http1_transport(TransportContext& context);

// The transport a run uses: `engine`, or for kAuto the HTTP/1.1 one for http:// URLs.
bool use_http1_transport(const Endpoint& endpoint, HttpEngine engine);

// Whether `headers` ("Name: value" lines) has one called `name` (case-insensitive).
bool has_header(const std::vector<std::string>& headers, std::string_view name);

// "Basic <base64 of user:password>" for a URL with user info (percent-decoded, as libcurl and
// aiohttp send it), "" without.
std::string basic_auth_value(const std::string& url);

// `seconds` as ns, within [min_seconds, kMaxTimeoutS] (NaN: the maximum): a timeout in seconds
// becomes ns here and nowhere else, so a huge one never wraps into a negative deadline.
int64_t timeout_ns(double seconds, double min_seconds);

// "0.5", "600": a whole-number cast would report a 0.5 s timeout as "0 s".
std::string seconds_text(double seconds);

// Header lines every request carries: Content-Type (unless given), Authorization when there is
// an API key (unless given), then the user's headers but x-request-id (each request sets its
// own).
std::vector<std::string> base_header_lines(const Endpoint& endpoint);

// "HTTP <status>: <the body's error message>" (first 200 bytes, one line, redacted).
std::string http_error_message(long status, std::string_view body);

}  // namespace servebench::client::detail
