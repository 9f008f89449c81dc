// File: sim/sim.h
// The simulated OpenAI-compatible inference server (`servebench sim`, and the embedded default
// target of `servebench run`). It answers /v1/completions and /v1/chat/completions as vLLM's
// OpenAI server does, streams one token per SSE event on a schedule given by a timing model
// (fixed TTFT/ITL, or a continuous-batching engine model), and can inject faults.
// Also: GET /v1/models, /health, /metrics (Prometheus, vLLM's names), POST /tokenize,
// /detokenize. docs/simulator.md describes flags, shapes, the token rule, faults and the trace.
// DeploymentServer serves every frontend of a simulated deployment (docs/deployments.md).
// It depends on core, tokenizer, sim/model and sim/deploy only; it never includes the client.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/timing_model.h"

namespace servebench::tokenizer {
class Tokenizer;
}

namespace servebench::sim {

namespace detail {
struct DeploymentShared;
}

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

  // Set by DeploymentServer: serve frontend `deployment_frontend` of this deployment (mode,
  // fixed and engine are then unused).
  std::shared_ptr<detail::DeploymentShared> deployment;
  size_t deployment_frontend = 0;
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

// Serves every frontend of a deployment file (docs/deployments.md), each a Server at its own
// port, all sharing the deployment's workers (one mutex): `servebench sim --deployment`, and
// `run --sim-deployment` embedded. Each frontend answers as a Server does; its /metrics has the
// Dynamo-style frontend series and the vLLM series of each worker replica it reaches, and
// /dcgm/metrics the simulated DCGM exporter of every GPU of the deployment.
class DeploymentServer {
 public:
  // Loads and checks the file: a deployment that cannot run is one core::Error(kInput) naming
  // file:line and key. `base` applies to every frontend (host, threads, seed, tokenizer, faults,
  // output length, max_model_len, trace_out: one file for all); its port and mode are unused.
  // Ports: with `first_port`, frontend i at first_port + i (0: any free port for each);
  // without, the file's `port` of each frontend, else 8000 + i.
  DeploymentServer(Options base, const std::string& path,
                   std::optional<uint16_t> first_port = std::nullopt);
  ~DeploymentServer();
  DeploymentServer(const DeploymentServer&) = delete;
  DeploymentServer& operator=(const DeploymentServer&) = delete;

  // Binds and starts every frontend; throws core::Error naming the frontend if a port is taken.
  void start();
  size_t frontend_count() const;
  const std::string& frontend_name(size_t index) const;
  uint16_t port(size_t index) const;           // bound, after start()
  std::vector<std::string> urls() const;       // http://host:port of each frontend
  const std::string& deployment_name() const;  // the file's `name`
  const std::string& path() const;             // as given
  const std::string& file_text() const;        // the file's content, as read
  // Blocks until SIGINT/SIGTERM (or stop()), then stops every frontend.
  void wait();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace servebench::sim
