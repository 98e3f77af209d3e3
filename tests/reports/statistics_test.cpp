#include "reports/statistics.h"

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

}  // namespace
}  // namespace dyno
