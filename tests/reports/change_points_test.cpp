// Change points over revisions: a planted step is found where it is; noise alone gives none.
#include "dyno/reports/change_points.h"

#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace dyno {
namespace {

std::vector<double> noisy(size_t n, double level, double spread, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0, spread);
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(level + noise(rng));
  return v;
}

TEST(ChangePoints, APlantedFivePercentStepIsFoundAtItsRevision) {
  auto series = noisy(15, 1000, 10, 1);
  const auto after = noisy(10, 950, 10, 2);
  series.insert(series.end(), after.begin(), after.end());
  const auto changes = change_points(series);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].index, 15u);
  EXPECT_NEAR(changes[0].after / changes[0].before, 0.95, 0.01);
  EXPECT_LT(changes[0].p_value, 0.01);
}

TEST(ChangePoints, TwoStepsAreBothFound) {
  auto series = noisy(10, 1000, 5, 3);
  for (double level : {900.0, 1000.0}) {
    const auto part = noisy(10, level, 5, static_cast<uint64_t>(level));
    series.insert(series.end(), part.begin(), part.end());
  }
  const auto changes = change_points(series);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].index, 10u);
  EXPECT_EQ(changes[1].index, 20u);
}

// In a long history, a few nearly equal revisions are not taken for a change: a dip of five times
// the noise and a later step down, both found where they are.
TEST(ChangePoints, ADipAndALaterStepInALongHistoryAreFound) {
  std::vector<double> series;
  uint64_t seed = 4;
  for (const auto& [length, level] : std::vector<std::pair<size_t, double>>{{75, 1000}, {25, 950}, {50, 1000}, {150, 950}}) {
    const auto part = noisy(length, level, 10, seed++);
    series.insert(series.end(), part.begin(), part.end());
  }
  std::vector<size_t> at;
  for (const auto& c : change_points(series)) at.push_back(c.index);
  EXPECT_EQ(at, (std::vector<size_t>{75, 100, 150}));
}

TEST(ChangePoints, NoiseAloneHasNone) {
  for (uint64_t seed = 10; seed < 20; ++seed) EXPECT_TRUE(change_points(noisy(30, 1000, 20, seed)).empty()) << "seed " << seed;
  EXPECT_TRUE(change_points({1, 2}).empty());
  EXPECT_TRUE(change_points({}).empty());
}

}  // namespace
}  // namespace dyno
