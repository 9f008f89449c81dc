#include "run/probes.h"

#include <algorithm>
#include <chrono>

#include "metrics/metrics.h"

namespace servebench::run {

ProbeLoop::ProbeLoop(double rate, const client::Endpoint& endpoint, const client::BodyOptions& body,
                     const client::RunOptions& main_options, const tokenizer::Tokenizer& tokenizer)
    : rate_(rate), endpoint_(endpoint), body_(body), tokenizer_(tokenizer) {
  body_.request_id_prefix += "probe-";
  options_.http_engine = main_options.http_engine;
  options_.kernel_arrival_times = main_options.kernel_arrival_times;
  options_.drain_timeout_s = main_options.drain_timeout_s;
  options_.stop = &stopping_;
}

ProbeLoop::~ProbeLoop() {
  if (thread_.joinable()) stop();
}

void ProbeLoop::start() {
  if (rate_ > 0) thread_ = std::thread([this] { loop(); });
}

void ProbeLoop::loop() {
  const auto interval = std::chrono::duration<double>(1.0 / rate_);
  for (uint64_t i = 0; !stopping_.load(); ++i) {
    std::vector<client::PlannedRequest> plan(1);
    plan[0].index = i;
    plan[0].prompt = "Hi";
    plan[0].prompt_tokens = 1;
    plan[0].max_tokens = 1;
    client::run(endpoint_, body_, plan, options_, tokenizer_, [&](record::RequestRecord&& r) {
      if (r.sent_ns < 0) return;  // stopped before it was sent: not a probe
      if (r.success) {
        // vLLM's latency: from the send to the last token.
        e2el_ms_.push_back(static_cast<double>(r.last_token_ns - r.sent_ns) / 1e6);
      } else {
        ++failed_;
      }
    });
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, interval, [this] { return stopping_.load(); });
  }
}

std::optional<report::ProbeStats> ProbeLoop::stop() {
  if (!thread_.joinable()) return std::nullopt;
  {
    std::lock_guard lock(mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  thread_.join();
  if (e2el_ms_.empty()) return std::nullopt;
  report::ProbeStats stats;
  stats.completed = e2el_ms_.size();
  stats.failed = failed_;
  stats.median_e2el_ms = metrics::percentile_linear(e2el_ms_, 50);
  stats.p99_e2el_ms = metrics::percentile_linear(e2el_ms_, 99);
  stats.max_e2el_ms = *std::max_element(e2el_ms_.begin(), e2el_ms_.end());
  return stats;
}

}  // namespace servebench::run
