#include "dyno/reports/statistics.h"

#include <cmath>

#include <gtest/gtest.h>

namespace dyno {
namespace {

TEST(Statistics, MedianAndQuantiles) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(quantile({0, 10}, 0.25), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, RelativeIqrIgnoresOneOutlier) {
  EXPECT_NEAR(relative_iqr({100, 100, 100, 100, 1000}), 0.0, 1e-12);
  EXPECT_NEAR(relative_iqr({90, 100, 110}), 0.1, 1e-12);
}

// Order statistics j and n - j + 1 with 1 - 2 P(Binomial(n, 1/2) < j) >= the confidence, j largest.
TEST(Statistics, MedianConfidenceIntervalIsDistributionFree) {
  // n = 10 at 95%: j = 2 covers 97.9%, j = 3 only 89.1%.
  const Interval ten = median_confidence_interval({10, 1, 9, 2, 8, 3, 7, 4, 6, 5}, 0.95);
  EXPECT_DOUBLE_EQ(ten.low, 2);
  EXPECT_DOUBLE_EQ(ten.high, 9);
  // n = 2000 (0.5^n underflows a double): the interval is about the median +- 1.96 sqrt(n) / 2.
  std::vector<double> many;
  for (int i = 0; i < 2000; ++i) many.push_back((i * 7919) % 2000);
  const Interval wide = median_confidence_interval(many, 0.95);
  EXPECT_NEAR(wide.low, 956, 2);
  EXPECT_NEAR(wide.high, 1043, 2);
}

}  // namespace
}  // namespace dyno
