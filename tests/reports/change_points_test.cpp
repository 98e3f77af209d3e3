// Change points over revisions: a planted step is found where it is; noise alone gives none.
#include "reports/change_points.h"

#include <random>

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

TEST(ChangePoints, NoiseAloneHasNone) {
  for (uint64_t seed = 10; seed < 20; ++seed) EXPECT_TRUE(change_points(noisy(30, 1000, 20, seed)).empty()) << "seed " << seed;
  EXPECT_TRUE(change_points({1, 2}).empty());
  EXPECT_TRUE(change_points({}).empty());
}

}  // namespace
}  // namespace dyno
