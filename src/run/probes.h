// File: run/probes.h
// vLLM's --probe-request-rate: while the main run goes on, tiny requests ("Hi", one output token)
// are sent one at a time, each `1/rate` s after the previous one ended, bypassing
// --max-concurrency, and their end-to-end latency is reported apart: how much the main
// workload stalls an unrelated request (vllm/benchmarks/serve.py, probe_loop). Executes beside one
// point's main run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "client/client.h"
#include "report/report.h"
#include "tokenizer/tokenizer.h"

namespace servebench::run {

class ProbeLoop {
 public:
  // rate <= 0: no probes (start and stop do nothing). The probes use the main run's endpoint,
  // body options (their x-request-id is the prefix + "probe-" + a count), transport and drain
  // timeout.
  ProbeLoop(double rate, const client::Endpoint& endpoint, const client::BodyOptions& body,
            const client::RunOptions& main_options, const tokenizer::Tokenizer& tokenizer);
  ~ProbeLoop();
  ProbeLoop(const ProbeLoop&) = delete;
  ProbeLoop& operator=(const ProbeLoop&) = delete;

  void start();
  // Stops sending, lets the probe in flight finish (within the drain timeout), and returns
  // vLLM's probe figures; nullopt when no probe succeeded (vLLM then prints nothing).
  std::optional<report::ProbeStats> stop();

 private:
  void loop();

  double rate_;
  const client::Endpoint& endpoint_;
  client::BodyOptions body_;
  client::RunOptions options_;
  const tokenizer::Tokenizer& tokenizer_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  std::vector<double> e2el_ms_;  // successful probes
  size_t failed_ = 0;
};

}  // namespace servebench::run
