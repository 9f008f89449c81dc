// A replica's scaled step cost (scaled_cost.h): noise drawn from (seed, the step's start).
#include "sim/deploy/scaled_cost.h"

#include <cmath>
#include <numbers>

namespace servebench::sim::deploy {

double unit_draw(uint64_t seed, uint64_t key) {
  uint64_t z = seed ^ (key * 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

int64_t ScaledCost::step_ns(const StepBatch& b) const {
  double factor = scale_;
  for (const Engine* other : co_tenants_) {
    if (other->busy_at(b.start_ns)) {
      factor *= slowdown_;
      break;
    }
  }
  if (sigma_ > 0) {
    // Box-Muller: a standard normal from two uniform draws.
    const auto key = static_cast<uint64_t>(b.start_ns);
    const double u1 = 1 - unit_draw(seed_, key * 2);  // (0, 1]
    const double u2 = unit_draw(seed_, key * 2 + 1);
    const double z = std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    factor *= std::exp(sigma_ * z - sigma_ * sigma_ / 2);
  }
  int64_t ns = inner_->step_ns(b);
  return factor == 1 ? ns : std::llround(static_cast<double>(ns) * factor);
}

}  // namespace servebench::sim::deploy
