#include "reports/comparison.h"

#include <cmath>

#include <gtest/gtest.h>

#include "reports/user_error.h"

namespace dyno {
namespace {

CompareOptions five_percent() {
  CompareOptions o;
  o.threshold = 0.05;
  o.alpha = 0.01;
  return o;
}

TEST(Comparison, NormalHelpers) {
  EXPECT_NEAR(normal_cdf(0), 0.5, 1e-12);
  EXPECT_NEAR(normal_cdf(1.959963984540054), 0.975, 1e-9);
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_quantile(0.005), -2.5758293035489, 1e-9);
}

TEST(Comparison, HodgesLehmannEstimatesARelativeShift) {
  std::vector<double> base = {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8};
  std::vector<double> slower;
  for (double v : base) slower.push_back(v / 1.10);  // 10% more time per item = throughput / 1.1
  ShiftEstimate s = estimate_shift(base, slower, /*higher_is_better=*/true, 0.99);
  EXPECT_NEAR(s.regression, 0.10, 1e-9);
  EXPECT_LT(s.regression_low, 0.10 + 1e-9);
  EXPECT_GT(s.regression_high, 0.10 - 1e-9);
  EXPECT_LT(s.p_value, 0.001);
  EXPECT_EQ(verdict(s, five_percent()), "FAIL");
}

TEST(Comparison, IdenticalDistributionsPass) {
  std::vector<double> a = {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8, 100.1, 99.9};
  std::vector<double> b = {100.3, 99.6, 100.4, 99.7, 100.05, 99.95, 100.6, 99.4, 100, 100.15};
  ShiftEstimate s = estimate_shift(a, b, true, 0.99);
  EXPECT_NEAR(s.regression, 0.0, 0.005);
  EXPECT_GT(s.p_value, 0.05);
  EXPECT_EQ(verdict(s, five_percent()), "PASS");
}

TEST(Comparison, TooNoisyIsInconclusive) {
  std::vector<double> a = {50, 150, 80, 120};
  std::vector<double> b = {45, 140, 70, 118};
  ShiftEstimate s = estimate_shift(a, b, true, 0.99);
  EXPECT_EQ(verdict(s, five_percent()), "INCONCLUSIVE");
}

TEST(Comparison, LowerIsBetterForTimes) {
  std::vector<double> base = {10, 10.1, 9.9, 10.05, 9.95, 10};
  std::vector<double> faster = {9, 9.1, 8.9, 9.05, 8.95, 9};
  ShiftEstimate s = estimate_shift(base, faster, /*higher_is_better=*/false, 0.99);
  EXPECT_LT(s.regression, -0.05);  // an improvement is a negative regression
  EXPECT_EQ(verdict(s, five_percent()), "PASS");
}

TEST(Comparison, PairedShiftCancelsDrift) {
  // Both builds drift together by +-20% across pairs; the candidate is 6% slower in every pair.
  std::vector<double> base, cand;
  for (int i = 0; i < 12; ++i) {
    const double drift = 1.0 + 0.2 * std::sin(i);
    base.push_back(100 * drift);
    cand.push_back(100 * drift / 1.06);
  }
  ShiftEstimate paired = estimate_paired_shift(base, cand, true, 0.99);
  EXPECT_NEAR(paired.regression, 0.06, 1e-9);
  EXPECT_EQ(verdict(paired, five_percent()), "FAIL");
  ShiftEstimate unpaired = estimate_shift(base, cand, true, 0.99);
  EXPECT_NE(verdict(unpaired, five_percent()), "FAIL");  // the drift hides it without pairing
}

TEST(Comparison, RejectsTooFewOrInvalidFigures) {
  EXPECT_THROW(estimate_shift({1}, {1, 2}, true, 0.99), UserError);
  EXPECT_THROW(estimate_shift({1, 2}, {1, -2}, true, 0.99), UserError);
  EXPECT_THROW(estimate_paired_shift({1, 2, 3}, {1, 2}, true, 0.99), UserError);
}

}  // namespace
}  // namespace dyno
