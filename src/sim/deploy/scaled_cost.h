// File: sim/deploy/scaled_cost.h (private to sim/deploy)
// How a deployment scales a replica's step cost beyond the cost model: its group's
// step_time_scale, seeded step-time noise, and co-tenants on one GPU (docs/deployments.md,
// "Noise" and "Topologies").
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/model/engine.h"

namespace servebench::sim::deploy {

// A draw in [0, 1) fixed by (seed, key): splitmix64's finalizer over both.
double unit_draw(uint64_t seed, uint64_t key);

// Scales another cost: a replica group's step_time_scale, step-time noise, and co-tenants on
// one GPU (while any of them has work when a step starts, the step takes `slowdown` times as
// long). The noise is a lognormal factor of mean 1 and coefficient of variation `cv`, drawn
// from (seed, the step's start): a re-planned step keeps its draw, and a run repeats.
class ScaledCost final : public StepCost {
 public:
  ScaledCost(std::shared_ptr<const StepCost> inner, double scale, double cv, uint64_t seed)
      : inner_(std::move(inner)),
        scale_(scale),
        sigma_(std::sqrt(std::log1p(cv * cv))),
        seed_(seed) {}
  void share_with(const Engine* co_tenant, double slowdown) {
    co_tenants_.push_back(co_tenant);
    slowdown_ = slowdown;
  }
  int64_t step_ns(const StepBatch& b) const override;

 private:
  std::shared_ptr<const StepCost> inner_;
  double scale_;
  double sigma_;  // of the noise's log
  uint64_t seed_;
  double slowdown_ = 1;
  std::vector<const Engine*> co_tenants_;
};

}  // namespace servebench::sim::deploy
