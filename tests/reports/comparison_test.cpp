#include "dyno/reports/comparison.h"

#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"

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

TEST(Comparison, StudentTMatchesTheTables) {
  const std::vector<std::tuple<double, double, double>> table = {  // p, degrees of freedom, quantile
      {0.975, 1, 12.70620474}, {0.95, 1, 6.313751515}, {0.975, 2, 4.302652730}, {0.975, 3, 3.182446305},
      {0.995, 3, 5.840909310}, {0.9995, 3, 12.92397863}, {0.975, 5, 2.570581836}, {0.975, 10, 2.228138852},
      {0.995, 10, 3.169272673}, {0.975, 30, 2.042272456}, {0.975, 1000, 1.962339081}};
  for (const auto& [p, v, t] : table) {
    EXPECT_NEAR(student_t_quantile(p, v), t, 1e-8 * t) << p << " " << v;
    EXPECT_NEAR(student_t_quantile(1 - p, v), -t, 1e-8 * t) << p << " " << v;
  }
  // Fractional degrees of freedom (the noise model's) lie between their neighbours.
  EXPECT_GT(student_t_quantile(0.975, 1.5), student_t_quantile(0.975, 2));
  EXPECT_LT(student_t_quantile(0.975, 1.5), student_t_quantile(0.975, 1));
  EXPECT_DOUBLE_EQ(student_t_quantile(0.5, 4), 0.0);
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

// The whole range of four pairs covers the shift 87.5% of the time (1 - 2 / 2^4) and of 3 x 3
// repetitions 90% (1 - 2 / C(6, 3)): short of 99%, so equal figures are no PASS there; eight pairs
// (99.2%) and 3 against 10 (99.3%) reach it.
TEST(Comparison, TooFewRepetitionsForTheConfidenceGiveNoPass) {
  const std::vector<double> four = {100, 100.2, 99.9, 100.1}, three = {100, 100.1, 99.9};
  ShiftEstimate s = estimate_paired_shift(four, four, true, 0.99);
  EXPECT_TRUE(s.short_of_confidence);
  EXPECT_LT(s.regression_high, 0.05);
  EXPECT_EQ(verdict(s, five_percent()), "INCONCLUSIVE");
  s = estimate_shift(three, three, true, 0.99);
  EXPECT_TRUE(s.short_of_confidence);
  EXPECT_EQ(verdict(s, five_percent()), "INCONCLUSIVE");

  const std::vector<double> eight = {100, 100.2, 99.9, 100.1, 100.05, 99.95, 100.15, 99.85};
  s = estimate_paired_shift(eight, eight, true, 0.99);
  EXPECT_FALSE(s.short_of_confidence);
  EXPECT_EQ(verdict(s, five_percent()), "PASS");
  const std::vector<double> ten = {100, 101, 99, 100.5, 99.5, 100, 100.2, 99.8, 100.1, 99.9};
  s = estimate_shift(ten, three, true, 0.99);
  EXPECT_FALSE(s.short_of_confidence);
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

TEST(Comparison, OneLookTestsAtAlphaItself) { EXPECT_DOUBLE_EQ(sequential_look_alpha(0.01, {12}), 0.01); }

TEST(Comparison, EquallySpacedLooksGetPococksConstantBoundary) {
  // Pocock's constants for K equally spaced looks at an overall 2.5% one-sided (5% two-sided)
  // level (Jennison & Turnbull, Group Sequential Methods, Table 2.1).
  const std::vector<std::pair<int, double>> pocock = {{2, 2.178}, {5, 2.413}, {10, 2.555}};
  for (const auto& [k, boundary] : pocock) {
    std::vector<int> looks;
    for (int i = 1; i <= k; ++i) looks.push_back(10 * i);
    EXPECT_NEAR(normal_quantile(1 - sequential_look_alpha(0.025, looks)), boundary, 0.01) << k << " looks";
  }
}

TEST(Comparison, MoreLooksTestEachAtALowerLevelButAboveBonferroni) {
  // A check's re-run: a first look at 12 pairs, then one after every block of 2 more, up to 36.
  std::vector<int> re_run;
  for (int n = 12; n <= 36; n += 2) re_run.push_back(n);
  const double two_looks = sequential_look_alpha(0.01, {12, 14}), thirteen_looks = sequential_look_alpha(0.01, re_run);
  EXPECT_LT(two_looks, 0.01);
  EXPECT_GT(two_looks, 0.01 / 2);
  EXPECT_LT(thirteen_looks, two_looks);
  EXPECT_GT(thirteen_looks, 0.01 / 13);
}

// Holm's step-down over three metrics at 0.01: the smallest p against 0.0033, the next 0.005, the
// last 0.01, stopping at the first that is kept.
TEST(Comparison, HolmRejectsStepByStepAndStopsAtTheFirstKept) {
  using Rejections = std::vector<bool>;
  EXPECT_EQ(holm_rejections({0.004, 0.008, 0.2}, 0.01), (Rejections{false, false, false}));  // each below 0.01 alone
  EXPECT_EQ(holm_rejections({0.004, 0.001, 0.2}, 0.01), (Rejections{true, true, false}));
  EXPECT_EQ(holm_rejections({0.009, 0.001, 0.004}, 0.01), (Rejections{true, true, true}));
  EXPECT_EQ(holm_rejections({0.005}, 0.01), (Rejections{true}));  // one metric: its own level
  EXPECT_EQ(holm_rejections({}, 0.01), Rejections{});
}

TEST(Comparison, SequentialLevelRejectsLooksThatAreNotIncreasing) {
  EXPECT_THROW(sequential_look_alpha(0.01, {}), std::invalid_argument);
  EXPECT_THROW(sequential_look_alpha(0.01, {12, 12}), std::invalid_argument);
  EXPECT_THROW(sequential_look_alpha(0.01, {14, 12}), std::invalid_argument);
  EXPECT_THROW(sequential_look_alpha(1.5, {12, 14}), std::invalid_argument);
  EXPECT_THROW(sequential_look_alpha(1e-6, {12, 14}), std::invalid_argument);  // beyond what the simulation tells
}

}  // namespace
}  // namespace dyno
