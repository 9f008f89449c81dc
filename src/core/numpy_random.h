// File: core/numpy_random.h
// numpy's random streams, draw for draw, so that a seed means what it means to vLLM's benchmark:
//   - NumpyRandomState: numpy's legacy global generator (np.random.seed(seed), then
//     np.random.gamma, np.random.randint, ...): MT19937 seeded as RandomState.seed(int) seeds it,
//     with numpy's legacy double, exponential, gauss and gamma algorithms
//     (numpy/random/src/legacy/legacy-distributions.c, src/distributions/distributions.c);
//   - NumpyGenerator: np.random.default_rng(seed): PCG64 (XSL-RR 128/64) seeded through
//     SeedSequence, and Generator.integers' bounded draws (Lemire's method, numpy's 32-bit
//     buffering; numpy/random/_pcg64.pyx, bit_generator.pyx, src/distributions).
// Both are checked against Debian's python3-numpy (1.24) by core_tests, from
// scripts/gen-numpy-expectations.py. The legacy stream is frozen by numpy's policy (NEP 19);
// PCG64 and Generator.integers have been unchanged since numpy 1.17.
// Floating-point results use the C library's log/pow/sqrt, as numpy does, so they are bit for
// bit equal on the same libm (glibc).
#pragma once

#include <cstdint>
#include <random>

namespace servebench::core {

// numpy.random.RandomState (the generator behind np.random.* after np.random.seed).
class NumpyRandomState {
 public:
  // RandomState.seed(int): MT19937's init_genrand(seed) (not init_by_array, which numpy uses
  // only for array seeds). numpy refuses seeds above 2^32 - 1, and so do callers.
  explicit NumpyRandomState(uint32_t seed) : mt_(seed) {}

  uint32_t next_u32() {
    ++words_drawn_;
    return static_cast<uint32_t>(mt_());
  }
  // random_sample(): 53 bits from two draws ((a >> 5) * 2^26 + (b >> 6)) / 2^53.
  double random_sample();
  // standard_exponential(): -log(1 - random_sample()).
  double standard_exponential();
  // standard_normal(): the polar method, the second value of each pair kept for the next call.
  double gauss();
  // standard_gamma(shape): shape 1 = exponential; < 1 Johnk/Ahrens-Dieter's rejection;
  // > 1 Marsaglia-Tsang with gauss().
  double standard_gamma(double shape);
  // gamma(shape, scale) = scale * standard_gamma(shape).
  double gamma(double shape, double scale) { return scale * standard_gamma(shape); }
  // randint(low, high) for the default int64 dtype: [low, high), numpy's masked rejection
  // (the smallest all-ones mask covering high - 1 - low), 32-bit draws when the range fits.
  int64_t randint(int64_t low, int64_t high);

  // 32-bit words drawn since seeding: how far the stream has gone.
  uint64_t words_drawn() const { return words_drawn_; }
  // Skips `words` 32-bit words, as draws another user of the same stream made.
  void discard(uint64_t words);

 private:
  std::mt19937 mt_;  // numpy's MT19937 is the reference one; seeding matches std::mt19937's
  uint64_t words_drawn_ = 0;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

// np.random.seed's range: the seed as a 32-bit word; throws core::Error (kUsage, "--seed") for
// 2^32 or more, which numpy refuses, saying the seed is for `what` ("random arrivals").
uint32_t numpy_legacy_seed(uint64_t seed, const char* what);

// np.random.default_rng(seed): a Generator over PCG64.
class NumpyGenerator {
 public:
  // SeedSequence(seed).generate_state(4, uint64) gives PCG64's state and increment.
  explicit NumpyGenerator(uint64_t seed);

  uint64_t next_u64();
  // PCG64's 32-bit output: the low half of a 64-bit draw, the high half kept for the next call.
  uint32_t next_u32();
  // Generator.integers(low, high) for the default int64 dtype: [low, high); nothing is drawn
  // when high - low == 1. Callers draw `size` values by calling it `size` times.
  int64_t integers(int64_t low, int64_t high);

 private:
  unsigned __int128 state_ = 0, increment_ = 0;
  bool has_u32_ = false;
  uint32_t u32_ = 0;
};

// SeedSequence(seed).generate_state(words, uint32) for a non-negative integer seed (numpy's
// hash mixing of the seed's 32-bit words into a pool of 4); exposed for its test.
void numpy_seed_sequence_state(uint64_t seed, uint32_t* out, int words);

}  // namespace servebench::core
