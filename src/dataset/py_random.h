// File: dataset/py_random.h (internal to the dataset part)
// Python's `random` module generator: MT19937 seeded by init_by_array from the seed's 32-bit
// words, and the exact draws of random.shuffle, random.choice and random.choices. vLLM shuffles
// and oversamples file datasets with `random.seed(seed)` + these calls, so the same seed selects
// the same rows here as in vLLM (CPython 3.x, _randommodule.c and random.py).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace servebench::dataset {

class PyRandom {
 public:
  explicit PyRandom(uint64_t seed);
  uint32_t next_u32();  // genrand_uint32
  // random.getrandbits(k) for 1 <= k <= 32.
  uint32_t getrandbits(int k) { return next_u32() >> (32 - k); }
  // random._randbelow(n): rejection sampling on bit_length(n) bits; n in [1, 2^32).
  uint64_t randbelow(uint64_t n);
  double random();  // random.random(): 53 bits from two draws

  // random.shuffle(items).
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i-- > 1;) {
      std::swap(items[i], items[randbelow(i + 1)]);
    }
  }

 private:
  std::array<uint32_t, 624> state_{};
  size_t index_ = 624;
};

}  // namespace servebench::dataset
