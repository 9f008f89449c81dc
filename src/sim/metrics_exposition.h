// File: sim/metrics_exposition.h (private to the sim part)
// The simulator's own counters and histograms, and their /metrics text in vLLM's names
// (vllm/v1/metrics/loggers.py) plus servebench_sim:* for what only a simulator knows (emission
// lateness, injected faults). Each front I/O thread writes its own FrontMetrics (single writer,
// relaxed atomics); the exposition sums them.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/token_schedule.h"

namespace servebench::sim::detail {

struct Counter {
  std::atomic<uint64_t> v{0};
  void add(uint64_t d) {
    v.store(v.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
  }
  void max_of(uint64_t x) {
    if (x > v.load(std::memory_order_relaxed)) v.store(x, std::memory_order_relaxed);
  }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

// vLLM's buckets (vllm/v1/metrics/loggers.py) for TTFT and ITL; e2e likewise.
constexpr double kTtftBuckets[] = {0.001, 0.005, 0.01, 0.02,  0.04,  0.06,  0.08, 0.1,
                                   0.25,  0.5,   0.75, 1.0,   2.5,   5.0,   7.5,  10.0,
                                   20.0,  40.0,  80.0, 160.0, 640.0, 2560.0};
constexpr double kItlBuckets[] = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
                                  0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
constexpr double kE2eBuckets[] = {0.3,  0.5,   0.8,   1.0,   1.5,   2.0,    2.5,
                                  5.0,  10.0,  15.0,  20.0,  30.0,  40.0,   50.0,
                                  60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
// servebench's own: emission lateness (send − due), fine-grained below a millisecond.
constexpr double kLagBuckets[] = {1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3,
                                  5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,    0.25, 0.5,  1.0};

struct Histogram {
  std::vector<int64_t> bounds_ns;
  std::unique_ptr<Counter[]> buckets;  // bounds + the +Inf bucket
  Counter count, sum_ns;

  template <size_t N>
  explicit Histogram(const double (&bounds)[N]) : buckets(new Counter[N + 1]) {
    for (double b : bounds) bounds_ns.push_back(std::llround(b * 1e9));
  }
  void observe(int64_t ns) {
    if (ns < 0) ns = 0;
    size_t i = 0;
    while (i < bounds_ns.size() && ns > bounds_ns[i]) ++i;
    buckets[i].add(1);
    count.add(1);
    sum_ns.add(static_cast<uint64_t>(ns));
  }
};

constexpr int kFaultKinds = 8;  // FaultRule::Kind values

struct FrontMetrics {
  Counter prompt_tokens, generation_tokens, success_length, success_stop, cancelled, rejected;
  Counter faults[kFaultKinds];
  Counter lag_max_ns;
  Histogram ttft{kTtftBuckets}, itl{kItlBuckets}, e2e{kE2eBuckets}, lag{kLagBuckets};
};

// Prometheus text pieces: a family's `# HELP` and `# TYPE` lines; one `name{labels} value` line.
void append_family(std::string& out, std::string_view name, std::string_view type,
                   std::string_view help);
void append_sample(std::string& out, std::string_view name, std::string_view labels,
                   std::string_view value);

// The Prometheus text of every front thread's metrics and the schedule's gauges.
std::string exposition_text(std::string_view served_model_name,
                            const std::vector<const FrontMetrics*>& fronts,
                            const ScheduleStats& engine);

// A deployment frontend's own series in Dynamo's names (dynamo_frontend_*), labelled model and
// frontend, and the simulator's servebench_sim:* series; the engine series come per worker
// (deployment_state.h).
std::string frontend_exposition_text(std::string_view served_model_name,
                                     std::string_view frontend_name,
                                     const std::vector<const FrontMetrics*>& fronts,
                                     const ScheduleStats& engines);

}  // namespace servebench::sim::detail
