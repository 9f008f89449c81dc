// MT19937 as CPython's _randommodule.c seeds and uses it (the reference algorithm of Matsumoto
// and Nishimura: init_genrand, init_by_array, genrand_int32).
#include "dataset/py_random.h"

#include <bit>

namespace servebench::dataset {
namespace {
constexpr size_t kN = 624, kM = 397;
}

PyRandom::PyRandom(uint64_t seed) {
  // random.seed(int): the absolute value split into little-endian 32-bit words; 0 is one word.
  std::vector<uint32_t> key;
  for (uint64_t v = seed; v != 0; v >>= 32) key.push_back(static_cast<uint32_t>(v));
  if (key.empty()) key.push_back(0);

  state_[0] = 19650218u;  // init_genrand(19650218)
  for (size_t i = 1; i < kN; ++i) {
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  size_t i = 1, j = 0;
  for (size_t k = std::max(kN, key.size()); k > 0; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525u)) + key[j] +
                static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (size_t k = kN - 1; k > 0; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941u)) -
                static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
  }
  state_[0] = 0x80000000u;
  index_ = kN;
}

uint32_t PyRandom::next_u32() {
  if (index_ >= kN) {
    auto twist = [this](size_t a, size_t b, size_t c) {
      const uint32_t y = (state_[a] & 0x80000000u) | (state_[b] & 0x7fffffffu);
      state_[a] = state_[c] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    };
    size_t k = 0;
    for (; k < kN - kM; ++k) twist(k, k + 1, k + kM);
    for (; k < kN - 1; ++k) twist(k, k + 1, k + kM - kN);
    twist(kN - 1, 0, kM - 1);
    index_ = 0;
  }
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t PyRandom::randbelow(uint64_t n) {
  const int bits = static_cast<int>(std::bit_width(n));  // n.bit_length()
  uint64_t r = getrandbits(bits);
  while (r >= n) r = getrandbits(bits);
  return r;
}

double PyRandom::random() {
  const uint32_t a = next_u32() >> 5, b = next_u32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

}  // namespace servebench::dataset
