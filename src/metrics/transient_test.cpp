#include "metrics/transient.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace servebench::metrics {
namespace {

constexpr int64_t kMs = 1'000'000;

// n requests, request i due at i * gap_ms and done 50 ms later.
std::vector<record::RequestRecord> evenly(size_t n, int64_t gap_ms) {
  std::vector<record::RequestRecord> rs(n);
  for (size_t i = 0; i < n; ++i) {
    rs[i].index = i;
    rs[i].intended_ns = rs[i].sent_ns = static_cast<int64_t>(i) * gap_ms * kMs;
    rs[i].done_ns = rs[i].sent_ns + 50 * kMs;
    rs[i].success = true;
  }
  return rs;
}

std::vector<Phase> phases(std::initializer_list<int> codes) {
  std::vector<Phase> out;
  for (int c : codes)
    out.push_back(c == 0 ? Phase::kMeasured : c == 1 ? Phase::kWarmup : Phase::kCooldown);
  return out;
}

TEST(Transients, NoWindowMeasuresEverything) {
  auto rs = evenly(4, 100);
  TransientSplit s = split_transients(rs, {});
  EXPECT_EQ(s.phase, phases({0, 0, 0, 0}));
  EXPECT_EQ(s.warmup + s.cooldown, 0u);
}

TEST(Transients, ByCountTakesTheFirstAndLastToCompleteNotTheFirstInTheList) {
  auto rs = evenly(6, 100);
  rs[0].done_ns = 900 * kMs;  // the first sent finishes last
  TransientSpec spec;
  spec.warmup.number = 2;
  spec.cooldown.number = 1;
  TransientSplit s = split_transients(rs, spec);
  // Completion order: 1, 2, 3, 4, 5, 0 -> warmup {1, 2}, cooldown {0}.
  EXPECT_EQ(s.phase, phases({2, 1, 1, 0, 0, 0}));
  EXPECT_EQ(s.warmup, 2u);
  EXPECT_EQ(s.cooldown, 1u);
}

TEST(Transients, ByTimeWarmupIsDueBeforeTheBoundCooldownEndsInTheLastSeconds) {
  auto rs = evenly(10, 100);  // due 0..900 ms, done 50..950 ms
  TransientSpec spec;
  spec.run_duration_s = 1.0;
  spec.warmup.seconds = 0.2;    // due < 200 ms: 0 and 100 (200 is on the bound: measured)
  spec.cooldown.seconds = 0.2;  // done > 800 ms: 850 and 950 (done at 750: measured)
  TransientSplit s = split_transients(rs, spec);
  EXPECT_EQ(s.phase, phases({1, 1, 0, 0, 0, 0, 0, 0, 2, 2}));
}

TEST(Transients, CooldownSecondsWithoutDurationCountBackFromTheLastCompletion) {
  auto rs = evenly(5, 100);  // done 50, 150, 250, 350, 450 ms
  TransientSpec spec;
  spec.cooldown.seconds = 0.15;  // done > 300 ms
  EXPECT_EQ(split_transients(rs, spec).phase, phases({0, 0, 0, 2, 2}));
}

TEST(Transients, FractionsOfTheCountOrOfTheDuration) {
  auto rs = evenly(10, 100);
  TransientSpec by_count;
  by_count.warmup.fraction = 0.2;
  by_count.cooldown.fraction = 0.3;
  EXPECT_EQ(split_transients(rs, by_count).phase, phases({1, 1, 0, 0, 0, 0, 0, 2, 2, 2}));
  TransientSpec by_time;
  by_time.run_duration_s = 2.0;    // done at 50..950 ms of a 2 s run: all in the first half
  by_time.warmup.fraction = 0.25;  // done before 500 ms
  EXPECT_EQ(split_transients(rs, by_time).phase, phases({1, 1, 1, 1, 1, 0, 0, 0, 0, 0}));
}

TEST(Transients, WarmupWinsWhenWindowsOverlapAndVllmWarmupsStayOut) {
  auto rs = evenly(3, 100);
  rs[2].warmup = true;  // a --num-warmups record: compute() ignores it already
  TransientSpec spec;
  spec.warmup.number = 2;
  spec.cooldown.number = 2;
  TransientSplit s = split_transients(rs, spec);
  EXPECT_EQ(s.phase, phases({1, 1, 0}));
  EXPECT_EQ(s.cooldown, 0u);
}

TEST(Transients, BadFractionIsAUsageError) {
  auto rs = evenly(2, 100);
  TransientSpec spec;
  spec.cooldown.fraction = 1.0;
  try {
    split_transients(rs, spec);
    FAIL();
  } catch (const core::Error& e) {
    EXPECT_EQ(e.kind(), core::ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--cooldown"), std::string::npos);
  }
}

}  // namespace
}  // namespace servebench::metrics
