// File: run/sequence.h
// Planning: the points of a run, in order: vLLM's --request-rate × --max-concurrency lists, or
// a GuideLLM profile's benchmarks (a sweep picks its constant rates from its first two results).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "report/tables.h"
#include "run/run.h"

namespace servebench::run {

class BenchmarkSequence {
 public:
  explicit BenchmarkSequence(const Spec& c) : base_(c) {}
  // The next benchmark's config, given the results so far (a sweep reads the request rates
  // of its synchronous and throughput benchmarks), or nullopt when done. Throws core::Error
  // when a sweep cannot choose its rates (its throughput benchmark completed nothing).
  std::optional<Spec> next(std::span<const report::RunResult> done);

 private:
  const Spec& base_;
  size_t index_ = 0;
  std::vector<double> sweep_rates_;  // a sweep's constant rates, once known
};

}  // namespace servebench::run
