// Expected values were printed by CPython 3.11's `random` module (random.seed(n) then the call
// named in each test): PyRandom must reproduce them draw for draw.
#include "dataset/py_random.h"

#include <gtest/gtest.h>

#include <numeric>

namespace servebench::dataset {
namespace {

TEST(PyRandom, GetrandbitsMatchesCPythonForSeedZero) {
  PyRandom rng(0);
  EXPECT_EQ(rng.getrandbits(32), 3626764237u);
  EXPECT_EQ(rng.getrandbits(32), 1654615998u);
  EXPECT_EQ(rng.getrandbits(32), 3255389356u);
}

TEST(PyRandom, SeedsWiderThan32BitsUseEveryWord) {
  PyRandom rng(12345678901234ull);
  EXPECT_EQ(rng.getrandbits(32), 107551873u);
  EXPECT_DOUBLE_EQ(rng.random(), 0.5595850061277069);
}

TEST(PyRandom, ShuffleMatchesCPython) {
  std::vector<int> items(10);
  std::iota(items.begin(), items.end(), 0);
  PyRandom(0).shuffle(items);
  EXPECT_EQ(items, (std::vector<int>{7, 8, 1, 5, 3, 4, 2, 0, 9, 6}));

  std::vector<int> twenty(20);
  std::iota(twenty.begin(), twenty.end(), 0);
  PyRandom((1ull << 40) + 7).shuffle(twenty);
  EXPECT_EQ(twenty, (std::vector<int>{17, 0,  10, 3, 1,  2, 9, 12, 7,  13,
                                      5,  11, 14, 6, 16, 4, 8, 15, 18, 19}));
}

TEST(PyRandom, ChoiceAndChoicesMatchCPython) {
  PyRandom choice(3);  // random.choice(range(5)) six times
  std::vector<uint64_t> picks;
  for (int i = 0; i < 6; ++i) picks.push_back(choice.randbelow(5));
  EXPECT_EQ(picks, (std::vector<uint64_t>{1, 4, 4, 1, 2, 4}));

  PyRandom choices(0);  // random.choices(range(7), k=5): floor(random() * 7)
  std::vector<int> drawn;
  for (int i = 0; i < 5; ++i) drawn.push_back(static_cast<int>(choices.random() * 7));
  EXPECT_EQ(drawn, (std::vector<int>{5, 5, 2, 1, 3}));
}

}  // namespace
}  // namespace servebench::dataset
