// File: sim/deploy/load_driver.h (tests only)
// Drives TimingModels the way a benchmark client would, on a made-up clock: closed loops
// (each client sends its next request when the previous one's last token is due) and open
// loops (requests at given times), several targets at once.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/deploy/deploy.h"

namespace servebench::sim::deploy {

struct Job {
  size_t target = 0;
  RequestShape shape{};
  int64_t arrival_ns = 0;
  uint64_t prefix_key = 0;
  int32_t prefix_tokens = 0;
};

struct Finished {
  size_t target = 0;
  uint64_t id = 0;
  RequestShape shape{};
  int64_t arrival_ns = 0;
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  int32_t tokens = 0;
  int32_t events_at_first_due = 0;
  int32_t distinct_due_times = 0;
  double ttft_ms() const { return static_cast<double>(first_ns - arrival_ns) / 1e6; }
  double tpot_ms() const {
    return tokens > 1 ? static_cast<double>(last_ns - first_ns) / 1e6 / (tokens - 1) : 0;
  }
};

struct LoadSummary {
  double mean_ttft_ms = 0;
  double mean_tpot_ms = 0;
  double requests_per_s = 0;  // completed / (last token − first arrival)
  size_t completed = 0;
};
LoadSummary summarize(const std::vector<Finished>& done, size_t target = SIZE_MAX);

class LoadDriver {
 public:
  explicit LoadDriver(std::vector<TimingModel*> targets) : targets_(std::move(targets)) {}
  // `clients[t]` clients on target t, each sending `per_client` requests; shape(t, k) is the
  // k-th request of a target.
  std::vector<Finished> closed_loop(const std::vector<int>& clients, int per_client,
                                    const std::function<Job(size_t target, int k)>& job);
  std::vector<Finished> open_loop(std::vector<Job> jobs);

 private:
  std::vector<Finished> run(std::vector<Job> jobs, const std::vector<int>& clients, int per_client,
                            const std::function<Job(size_t, int)>& job);
  std::vector<TimingModel*> targets_;
};

}  // namespace servebench::sim::deploy
