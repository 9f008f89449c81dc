// File: sim/sim.h
// The simulated OpenAI-compatible inference server (`servebench sim`, and the embedded default
// target of `servebench run`). It answers /v1/completions and /v1/chat/completions as vLLM's
// OpenAI server does, streams one token per SSE event on a schedule given by a timing model
// (fixed TTFT/ITL, or a continuous-batching engine model), and can inject faults.
// Also: GET /v1/models, /health, /metrics (Prometheus, vLLM's names), POST /tokenize,
// /detokenize. docs/simulator.md describes flags, shapes, the token rule, faults and the trace.
// It depends on core, tokenizer and sim/model only; it never includes the client.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/timing_model.h"

namespace servebench::tokenizer {
class Tokenizer;
}

namespace servebench::sim {

// How the length of a non-ignore_eos answer is drawn (then capped by max_tokens, floored by
// min_tokens).
struct OutputLengthDistribution {
  enum class Kind { kMaxTokens, kUniform, kNormal, kExponential } kind = Kind::kUniform;
  double mean = 128;   // kNormal, kExponential
  double stddev = 32;  // kNormal
  int32_t min = 1;     // kUniform lower bound
  int32_t max = 256;   // kUniform upper bound
};

// A fault rule: with `probability`, a request gets `kind`. Rules are tried in order; the first
// that fires applies.
struct FaultRule {
  enum class Kind {
    kHttp429,
    kHttp500,
    kHttp503,
    kResetMidStream,     // close the socket (RST) after `after_tokens` tokens
    kStall,              // stop sending for `stall_s` seconds after `after_tokens` tokens
    kMalformedEvent,     // send one event whose JSON is broken after `after_tokens` tokens
    kTruncatedBody,      // end the body (chunked terminator) without final chunk and [DONE]
    kErrorEventAfter200  // data: {"error": …} then close, after `after_tokens` tokens
  } kind;
  double probability = 1.0;
  int32_t after_tokens = 1;
  double stall_s = 0;
};

// `KIND[:PROB[:AFTER_TOKENS[:STALL_S]]]`, KIND one of 429 500 503 reset stall malformed truncate
// error-event (the --fault flag). Throws core::Error(kUsage) naming `where` on bad input.
FaultRule parse_fault_rule(std::string_view spec, const std::string& where = "--fault");
// `KIND[:AFTER_TOKENS[:STALL_S]]` (the x-servebench-fault request header); probability 1.
FaultRule parse_fault_header(std::string_view spec);
// The KIND word of a rule ("429", "reset", …).
const char* fault_kind_name(FaultRule::Kind kind);

// `max` | `uniform:MIN:MAX` | `normal:MEAN:STDDEV` | `exponential:MEAN` (--output-len-dist).
OutputLengthDistribution parse_output_length(std::string_view spec,
                                             const std::string& where = "--output-len-dist");

struct Options {
  std::string host = "127.0.0.1";
  uint16_t port = 8000;  // 0 = any free port (see Server::port())
  std::string served_model_name = "servebench-sim";
  int threads = 1;  // I/O threads

  enum class Mode { kFixed, kEngine } mode = Mode::kFixed;
  FixedTiming fixed;                       // fixed mode (its seed is overwritten by `seed`)
  EngineProfile engine;                    // engine mode
  OutputLengthDistribution output_length;  // when ignore_eos is false
  uint64_t seed = 0;
  int32_t max_model_len = 131072;
  size_t max_body_bytes = 32 << 20;  // larger request bodies get 413
  // Bytes a connection may hold unsent for a client that does not read; past it the stream ends
  // (reset) and the trace says "client_not_reading".
  size_t max_output_buffer_bytes = 16 << 20;

  std::vector<FaultRule> faults;
  std::string trace_out;  // JSONL of server-side times per request; "" = off
  // The flag that named trace_out, for messages (`run` embeds the simulator as --sim-trace-out).
  std::string trace_out_flag = "--trace-out";

  // Counts prompt tokens and writes output text; nullptr = the built-in word rule.
  std::shared_ptr<const tokenizer::Tokenizer> tokenizer;
};

// Runs the server on its own threads. Destroying it stops it and flushes the trace.
class Server {
 public:
  explicit Server(Options options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and starts serving in the background; throws core::Error if the address is taken.
  // Raises the RLIMIT_NOFILE soft limit to the hard limit (10,000 streams must fit).
  void start();
  // The bound port (useful with port 0).
  uint16_t port() const;
  // Blocks until stop() is called or SIGINT/SIGTERM arrives (for `servebench sim`).
  void wait();
  // Closes every connection (open streams are traced as "server_stopped"), joins the threads
  // and flushes the trace. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servebench::sim
