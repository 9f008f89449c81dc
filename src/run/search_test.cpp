// The SLO search's choice of loads (search.cpp): bracketing by doubling or halving, then
// bisection to within 5% (rates) or to adjacent whole numbers (concurrency).
#include "run/search.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace servebench::run {
namespace {

// Runs the search against a server that meets the SLOs up to `capacity`; the loads probed.
std::vector<double> search(double start, bool whole, double capacity, int max_runs,
                           std::vector<Probe>* out = nullptr) {
  std::vector<Probe> probes;
  std::vector<double> loads;
  for (int i = 0; i < max_runs; ++i) {
    const auto load = next_load(probes, start, whole);
    if (!load) break;
    loads.push_back(*load);
    probes.push_back({*load, *load <= capacity});
  }
  if (out) *out = probes;
  return loads;
}

TEST(SloSearch, RatesDoubleThenBisectToFivePercent) {
  std::vector<Probe> probes;
  const std::vector<double> loads = search(1, false, 5.5, 20, &probes);
  ASSERT_GE(loads.size(), 4u);
  EXPECT_EQ(std::vector<double>(loads.begin(), loads.begin() + 4),
            (std::vector<double>{1, 2, 4, 8}));
  EXPECT_DOUBLE_EQ(loads[4], 6);  // bisect [4, 8)
  const double best = *best_load(probes);
  EXPECT_LE(best, 5.5);
  EXPECT_GE(best, 5.5 / 1.05);
  EXPECT_LT(loads.size(), 20u);  // stopped by the 5% bracket, not the run limit
}

TEST(SloSearch, RatesHalveWhenTheStartMisses) {
  const std::vector<double> loads = search(8, false, 1.5, 3);
  EXPECT_EQ(loads, (std::vector<double>{8, 4, 2}));  // bounded by the run limit
  std::vector<Probe> probes;
  search(8, false, 1.5, 20, &probes);
  EXPECT_GE(*best_load(probes), 1.5 / 1.05);
}

TEST(SloSearch, ConcurrencyInWholeNumbersToAdjacent) {
  std::vector<Probe> probes;
  const std::vector<double> loads = search(1, true, 13, 20, &probes);
  EXPECT_EQ(std::vector<double>(loads.begin(), loads.begin() + 5),
            (std::vector<double>{1, 2, 4, 8, 16}));
  EXPECT_DOUBLE_EQ(*best_load(probes), 13);
  for (double l : loads) EXPECT_EQ(l, static_cast<int64_t>(l));
  // Nothing meets: halving stops below 1.
  std::vector<Probe> none;
  EXPECT_EQ(search(4, true, 0, 20, &none), (std::vector<double>{4, 2, 1}));
  EXPECT_FALSE(best_load(none));
}

}  // namespace
}  // namespace servebench::run
