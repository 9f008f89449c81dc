// File: client/client.h
// The benchmark client: sends a planned list of requests to one OpenAI-compatible endpoint at
// their intended times (or as concurrency slots free up), reads the SSE streams, and hands one
// RequestRecord per request to a callback as each finishes, from our own epoll + timerfd loop:
// plain http:// over servebench's HTTP/1.1 transport (keep-alive), anything else through
// libcurl's multi-socket API (HTTP/1.1 keep-alive, HTTP/2 when offered, TLS).
// It never drops a request: every planned request ends in exactly one record.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "record/record.h"

namespace servebench::tokenizer {
class Tokenizer;
}

namespace servebench::client {

enum class Api { kCompletions, kChatCompletions };

// Longest wait (~31.7 years): larger (or NaN) timeouts are clamped to it where seconds become ns.
inline constexpr double kMaxTimeoutS = 1e9;

struct Endpoint {
  // Full URL, e.g. http://127.0.0.1:8000/v1/completions. "user:password@" in it is sent as Basic
  // auth, as vLLM's aiohttp does; register_endpoint_secrets keeps it out of every text.
  std::string url;
  Api api = Api::kCompletions;
  std::string model;                 // the "model" field sent
  std::vector<std::string> headers;  // "Name: value"; no framing header (check_extra_header)
  std::string api_key;               // sent as "Authorization: Bearer …"; never logged
  bool insecure = false;             // skip TLS verification
  // PEM file of the CAs TLS peers are verified with (curl). Empty: $CURL_CA_BUNDLE, else
  // $SSL_CERT_FILE (as curl's tool reads them), else libcurl's built-in bundle.
  std::string ca_file;
  double timeout_s = 6 * 3600;  // per request, as vLLM's aiohttp total timeout (≤ kMaxTimeoutS)
};

// Throws core::Error (usage, at `where`) for a header the client frames itself and may not be
// given twice: Host, Content-Length, Transfer-Encoding, Connection.
void check_extra_header(std::string_view name, const std::string& where = "--header");

// Before anything is sent (run() and wait_until_ready() call it): check_extra_header on every
// header; a ca_file that cannot be read throws core::Error (input) naming it.
void validate_endpoint(const Endpoint& endpoint);

// The CA file TLS peers are verified with: Endpoint::ca_file, else $CURL_CA_BUNDLE, else
// $SSL_CERT_FILE; "" for libcurl's default. Other libcurl users (the /metrics scrapes, the model
// lookup) pass it on so that every request of a run trusts the same CAs.
std::string ca_file_for(const Endpoint& endpoint);

// core::register_secret for the URL's password and its "Basic <base64>" as sent. Call before
// threads that report errors start; run() and wait_until_ready() call it too (then a no-op).
void register_endpoint_secrets(const Endpoint& endpoint);

// One request to send: what goes in the body and when.
struct PlannedRequest {
  uint64_t index = 0;
  int64_t intended_ns = 0;  // ns after t0
  std::string prompt;       // completions "prompt" / chat user message
  int32_t prompt_tokens = 0;
  int32_t max_tokens = 0;
  bool warmup = false;
  // Multi-turn: a turn > 0 names the `index` of the previous turn of its conversation in
  // `follows`. It has no send time of its own: it is sent when that turn's record ends
  // successfully (its record's intended_ns is then that turn's done_ns), with the history
  // (chat: earlier user prompts and the answers actually generated, as messages; completions:
  // "prompt0" + answer0 + "\n\n" + prompt1 + …). When the previous turn failed or the run
  // stopped, it gets a record without being sent. All turns need the same loop; run() sees to it.
  int64_t conversation = -1;  // -1 = a single request
  int32_t turn = 0;
  int64_t follows = -1;  // -1 = sent at intended_ns (every request that is not a later turn)
};

struct BodyOptions {
  bool ignore_eos = false;
  bool continuous_usage_stats = true;  // ask for usage in every chunk (falls back if refused)
  std::string extra_body_json;         // merged into every body ("{…}")
  std::string request_id_prefix;       // x-request-id = prefix + index
};

// How requests travel. libcurl serves every URL (TLS, HTTP/2); servebench's own HTTP/1.1
// transport serves plain http:// at a fraction of the CPU per event (docs/performance.md).
enum class HttpEngine {
  kAuto,  // http1 for http:// URLs, curl otherwise
  kCurl,
  kHttp1,  // http:// only
};

// What a live view (run/live.h) reads while the run goes on: plain atomics the loops bump,
// never a lock. Totals over the run; a reader takes differences itself.
struct LiveCounters {
  std::atomic<int64_t> t0_mono_ns{0};  // 0 until t0 (core::mono_ns)
  std::atomic<uint64_t> sent{0};       // requests handed to the transport (warmups included)
};

struct RunOptions {
  int max_concurrency = 0;  // 0 = unlimited
  // Conversations begun and not yet ended (last turn done, or failed); a first turn is held
  // (keeping its intended time) while this many are active. 0 = unlimited.
  int max_active_conversations = 0;
  HttpEngine http_engine = HttpEngine::kAuto;
  // Time each chunk by when the kernel received it (SO_TIMESTAMPNS) rather than when the client
  // read it, so the client's own queueing never shows in TTFT or ITL. The HTTP/1.1 transport
  // can; libcurl's reads are always timed when read.
  bool kernel_arrival_times = true;
  int io_threads = 1;
  // Set to true (e.g. by a stop rule) to stop sending; in-flight requests get `drain_timeout_s`.
  // SIGINT/SIGTERM (core/interrupt.h) stop every run the same way, with or without it.
  std::atomic<bool>* stop = nullptr;
  double drain_timeout_s = 10;
  // > 0: at t0 + this, stop sending and cancel the requests in flight at once (GuideLLM's
  // max_duration: they end as "cancelled"); their records keep what had arrived.
  double max_duration_s = 0;
  // Several runs started at one moment (one per target, cli/run_targets.cpp): when set, run()
  // calls it once its bodies are built and takes the time it returns (core::mono_ns) as t0;
  // the caller returns the same time to every run once all are ready. It may throw to give up
  // before anything is sent. Unset: t0 = now.
  std::function<int64_t()> t0_gate;
  // Called on the delivering thread after each batch of sink calls (those of the last few ms,
  // never while the sink runs): a caller that buffers what the sink gets writes it out here,
  // with one system call per batch rather than per request, and off the event loops.
  std::function<void()> after_records;
  // When set: t0 and every send are counted there (one relaxed add per request).
  LiveCounters* live = nullptr;
};

// Health of the client itself over the run: did it keep up?
struct ClientStats {
  int64_t t0_mono_ns = 0;                   // core::mono_ns() at t0, to align with server traces
  double duration_s = 0;                    // first dispatch to last completion (vLLM's)
  double cpu_user_s = 0, cpu_system_s = 0;  // getrusage over the run
  int64_t max_loop_lag_ns = 0;              // longest time the event loop was late to a timer
  uint64_t bytes_received = 0;
  uint64_t sse_events = 0;
  uint64_t connections_opened = 0;
  std::string transport;  // "http1" or "curl"
  // Where chunk arrival times come from: "kernel" (every read carried the kernel's receive
  // stamp), "read" (the client's clock when it read the bytes), or "mixed".
  std::string arrival_clock;
  uint64_t kernel_stamped_reads = 0, reads_stamped_at_read = 0;
  // Over kernel-stamped reads: how long bytes waited between arrival and the client's read
  // (quantiles within 6.25%). Large values mean the client was busy, not the server slow.
  int64_t read_delay_p50_ns = 0, read_delay_p99_ns = 0, read_delay_p999_ns = 0;
  int64_t read_delay_max_ns = 0;
};

using RecordSink = std::function<void(record::RequestRecord&&)>;

// Runs the plan to completion (or stop + drain). t0 is taken when called; record times are ns
// after it. Output tokens are counted with `tokenizer` when the server gives no usage.
// Calls `sink` once per request, in completion order, never concurrently, from the client's
// threads (an event loop in its idle time, or a low-priority delivering thread; the calling
// thread waits), then options.after_records.
ClientStats run(const Endpoint& endpoint, const BodyOptions& body,
                const std::vector<PlannedRequest>& plan, const RunOptions& options,
                const tokenizer::Tokenizer& tokenizer, const RecordSink& sink);

// Sends one tiny request until the server answers 200 with a usable stream, or `timeout_s`
// passes (vLLM's ready check). Throws core::Error (network) with the last failure when it never
// becomes ready; a 4xx reply (e.g. wrong model) is returned at once as an error with the server's
// message. A 503 or 429 with Retry-After (seconds or an HTTP date) is retried after that long,
// at most until `timeout_s` ends.
void wait_until_ready(const Endpoint& endpoint, double timeout_s);

}  // namespace servebench::client
