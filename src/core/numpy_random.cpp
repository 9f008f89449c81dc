// numpy's legacy RandomState and its PCG64 Generator, re-implemented from numpy's published
// algorithms (numpy/random: _mt19937.pyx _legacy_seeding, src/legacy/legacy-distributions.c,
// src/distributions/distributions.c random_bounded_uint64_fill, _pcg64.pyx, src/pcg64/pcg64.h,
// bit_generator.pyx SeedSequence). The comments name numpy's function each step follows.
#include "core/numpy_random.h"

#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"

namespace servebench::core {
namespace {

// The smallest all-ones mask >= value (numpy's gen_mask).
uint64_t mask_covering(uint64_t value) {
  uint64_t mask = value;
  mask |= mask >> 1;
  mask |= mask >> 2;
  mask |= mask >> 4;
  mask |= mask >> 8;
  mask |= mask >> 16;
  mask |= mask >> 32;
  return mask;
}

// SeedSequence's constants (bit_generator.pyx, after Melissa O'Neill's seed_seq_fe).
constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd,
                   kMultB = 0x58f38ded, kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
constexpr int kPoolSize = 4;
constexpr int kXShift = 16;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  value ^= value >> kXShift;
  return value;
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t result = kMixMultL * x - kMixMultR * y;
  result ^= result >> kXShift;
  return result;
}

}  // namespace

// ---- NumpyRandomState

double NumpyRandomState::random_sample() {
  // legacy_double / mt19937_next_double.
  const int32_t a = static_cast<int32_t>(next_u32() >> 5);
  const int32_t b = static_cast<int32_t>(next_u32() >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyRandomState::standard_exponential() {
  return -std::log(1.0 - random_sample());  // legacy_standard_exponential
}

double NumpyRandomState::gauss() {
  // legacy_gauss: Marsaglia's polar method; the pair's other value is kept.
  if (has_gauss_) {
    has_gauss_ = false;
    const double kept = gauss_;
    gauss_ = 0.0;
    return kept;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

double NumpyRandomState::standard_gamma(double shape) {
  // legacy_standard_gamma.
  if (shape == 1.0) return standard_exponential();
  if (shape == 0.0) return 0.0;
  if (shape < 1.0) {
    for (;;) {
      const double u = random_sample();
      const double v = standard_exponential();
      if (u <= 1.0 - shape) {
        const double x = std::pow(u, 1. / shape);
        if (x <= v) return x;
      } else {
        const double y = -std::log((1 - u) / shape);
        const double x = std::pow(1.0 - shape + shape * y, 1. / shape);
        if (x <= (v + y)) return x;
      }
    }
  }
  const double b = shape - 1. / 3.;
  const double c = 1. / std::sqrt(9 * b);
  for (;;) {
    double x, v;
    do {
      x = gauss();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = random_sample();
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return b * v;
    if (std::log(u) < 0.5 * x * x + b * (1. - v + std::log(v))) return b * v;
  }
}

int64_t NumpyRandomState::randint(int64_t low, int64_t high) {
  // _rand_int64 with masked=True -> random_bounded_uint64_fill(use_masked=true).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  if (range == 0) return low;
  const uint64_t mask = mask_covering(range);
  uint64_t value;
  if (range <= 0xFFFFFFFFull) {
    do {
      value = next_u32() & mask;
    } while (value > range);
  } else {
    do {
      // mt19937_next64: the first word is the high half.
      const uint64_t hi = next_u32();
      value = ((hi << 32) | next_u32()) & mask;
    } while (value > range);
  }
  return static_cast<int64_t>(static_cast<uint64_t>(low) + value);
}

uint32_t numpy_legacy_seed(uint64_t seed, const char* what) {
  if (seed > UINT32_MAX) {
    throw Error(ErrorKind::kUsage, "--seed",
                std::string("must be below 2^32 for ") + what +
                    " (vLLM seeds numpy's np.random.seed with it, which refuses larger seeds), "
                    "got " +
                    std::to_string(seed));
  }
  return static_cast<uint32_t>(seed);
}

void NumpyRandomState::discard(uint64_t words) {
  mt_.discard(words);
  words_drawn_ += words;
}

// ---- SeedSequence and PCG64

void numpy_seed_sequence_state(uint64_t seed, uint32_t* out, int words) {
  // _coerce_to_uint32_array: the integer's 32-bit words, least significant first; 0 is [0].
  std::vector<uint32_t> entropy;
  do {
    entropy.push_back(static_cast<uint32_t>(seed));
    seed >>= 32;
  } while (seed != 0);

  // mix_entropy.
  uint32_t pool[kPoolSize];
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i) {
    pool[i] = hashmix(static_cast<size_t>(i) < entropy.size() ? entropy[i] : 0, hash_const);
  }
  for (int src = 0; src < kPoolSize; ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
    }
  }
  for (size_t src = kPoolSize; src < entropy.size(); ++src) {
    for (int dst = 0; dst < kPoolSize; ++dst) {
      pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
    }
  }

  // generate_state.
  uint32_t out_const = kInitB;
  for (int i = 0; i < words; ++i) {
    uint32_t value = pool[i % kPoolSize];
    value ^= out_const;
    out_const *= kMultB;
    value *= out_const;
    value ^= value >> kXShift;
    out[i] = value;
  }
}

namespace {
constexpr unsigned __int128 kPcgMultiplier =
    (static_cast<unsigned __int128>(0x2360ed051fc65da4ull) << 64) | 0x4385df649fccf645ull;
}

NumpyGenerator::NumpyGenerator(uint64_t seed) {
  // PCG64._seed_seq: generate_state(4, uint64) = 8 uint32 words, pairs read little-endian;
  // pcg64_set_seed(seed = {w[0], w[1]}, inc = {w[2], w[3]}) with the 128-bit value high word
  // first; then pcg_setseq_128_srandom_r.
  uint32_t words[8];
  numpy_seed_sequence_state(seed, words, 8);
  uint64_t w[4];
  for (int i = 0; i < 4; ++i) w[i] = words[2 * i] | (static_cast<uint64_t>(words[2 * i + 1]) << 32);
  const unsigned __int128 initial = (static_cast<unsigned __int128>(w[0]) << 64) | w[1];
  const unsigned __int128 sequence = (static_cast<unsigned __int128>(w[2]) << 64) | w[3];
  increment_ = (sequence << 1) | 1;
  state_ = 0;
  state_ = state_ * kPcgMultiplier + increment_;
  state_ += initial;
  state_ = state_ * kPcgMultiplier + increment_;
}

uint64_t NumpyGenerator::next_u64() {
  // pcg_setseq_128_xsl_rr_64_random_r: step, then output the new state.
  state_ = state_ * kPcgMultiplier + increment_;
  const auto high = static_cast<uint64_t>(state_ >> 64);
  const auto low = static_cast<uint64_t>(state_);
  return std::rotr(high ^ low, static_cast<int>(state_ >> 122));
}

uint32_t NumpyGenerator::next_u32() {
  // pcg64_next32.
  if (has_u32_) {
    has_u32_ = false;
    return u32_;
  }
  const uint64_t next = next_u64();
  has_u32_ = true;
  u32_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

int64_t NumpyGenerator::integers(int64_t low, int64_t high) {
  // _rand_int64 with masked=False -> random_bounded_uint64_fill(use_masked=false).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  const auto off = static_cast<uint64_t>(low);
  if (range == 0) return low;
  if (range == 0xFFFFFFFFull) return static_cast<int64_t>(off + next_u32());
  if (range < 0xFFFFFFFFull) {
    // buffered_bounded_lemire_uint32.
    const uint32_t range_excl = static_cast<uint32_t>(range) + 1;
    uint64_t m = static_cast<uint64_t>(next_u32()) * range_excl;
    uint32_t leftover = static_cast<uint32_t>(m);
    if (leftover < range_excl) {
      const uint32_t threshold = (UINT32_MAX - static_cast<uint32_t>(range)) % range_excl;
      while (leftover < threshold) {
        m = static_cast<uint64_t>(next_u32()) * range_excl;
        leftover = static_cast<uint32_t>(m);
      }
    }
    return static_cast<int64_t>(off + (m >> 32));
  }
  if (range == UINT64_MAX) return static_cast<int64_t>(off + next_u64());
  // bounded_lemire_uint64.
  const uint64_t range_excl = range + 1;
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * range_excl;
  uint64_t leftover = static_cast<uint64_t>(m);
  if (leftover < range_excl) {
    const uint64_t threshold = (UINT64_MAX - range) % range_excl;
    while (leftover < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * range_excl;
      leftover = static_cast<uint64_t>(m);
    }
  }
  return static_cast<int64_t>(off + static_cast<uint64_t>(m >> 64));
}

}  // namespace servebench::core
