#include "dyno/tuner/posterior.h"

#include <cmath>

#include <gtest/gtest.h>

namespace dyno {
namespace {

TEST(Posterior, OneComponentIsANormal) {
  const Posterior p{{1.0}, {0.1}, {0.02}};
  EXPECT_NEAR(p.mean(), 0.1, 1e-12);
  EXPECT_NEAR(p.quantile(0.975), 0.1 + 1.959964 * 0.02, 1e-6);
  EXPECT_NEAR(p.quantile(0.025, 2.0), 0.1 - 1.959964 * 0.04, 1e-6);  // widened
  // E[max(0, -X)] of a normal at zero: sd * pdf(0).
  EXPECT_NEAR((Posterior{{1.0}, {0.0}, {0.02}}).expected_shortfall(), 0.02 * 0.398942, 1e-6);
  EXPECT_LT(p.expected_shortfall(), 1e-6);  // five standard deviations above zero
}

TEST(Posterior, AMixtureCarriesTheMassOfEachComponent) {
  const Posterior p{{0.9, 0.1}, {-0.2, 0.05}, {0.02, 0.02}};
  EXPECT_NEAR(p.mean(), 0.9 * -0.2 + 0.1 * 0.05, 1e-12);
  EXPECT_LT(p.quantile(0.5), -0.15);  // the bulk
  EXPECT_GT(p.quantile(0.975), 0.0);  // the 10% component reaches above zero
  // Taking the side above zero would lose ~0.9 * 0.2 in expectation; the small component's loss is nil.
  Posterior flipped = p;
  for (double& m : flipped.means) m = -m;
  EXPECT_NEAR(flipped.expected_shortfall(), 0.1 * 0.05, 1e-4);
}

TEST(Posterior, TheDifferenceOfTwoPairsEveryComponent) {
  const Posterior a{{0.8, 0.2}, {1.0, 1.3}, {0.03, 0.04}}, b{{1.0}, {0.9}, {0.04}};
  const Posterior d = difference(a, b);
  ASSERT_EQ(d.weights.size(), 2u);
  EXPECT_NEAR(d.means[0], 0.1, 1e-12);
  EXPECT_NEAR(d.means[1], 0.4, 1e-12);
  EXPECT_NEAR(d.sds[0], 0.05, 1e-12);
  EXPECT_NEAR(d.mean(), a.mean() - b.mean(), 1e-12);
}

}  // namespace
}  // namespace dyno
