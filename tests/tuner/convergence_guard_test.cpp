#include "dyno/tuner/convergence_guard.h"

#include <cmath>

#include <gtest/gtest.h>

namespace dyno {
namespace {

TEST(ConvergenceGuard, AcceptsAFallingLossCloseToTheReference) {
  ConvergenceGuard guard;
  std::vector<double> reference = {2.3, 1.2, 0.9, 0.8, 0.7};
  std::vector<double> candidate = {2.3, 1.3, 0.95, 0.85, 0.72};
  EXPECT_FALSE(guard.check(candidate, &reference).has_value());
}

TEST(ConvergenceGuard, RejectsDivergingAndNonFiniteTrajectories) {
  ConvergenceGuard guard;
  auto rising = guard.check({2.3, 2.5, 3.9, 8.0}, nullptr);
  ASSERT_TRUE(rising.has_value());
  EXPECT_NE(rising->find("did not fall"), std::string::npos) << *rising;
  auto nan = guard.check({2.3, std::nan(""), 1.0}, nullptr);
  ASSERT_TRUE(nan.has_value());
  EXPECT_NE(nan->find("loss is nan at window 2"), std::string::npos) << *nan;
}

TEST(ConvergenceGuard, RejectsReducedPrecisionThatLagsTheFp32Reference) {
  ConvergenceGuard guard;
  std::vector<double> reference = {2.3, 1.0, 0.6, 0.5, 0.45};
  auto verdict = guard.check({2.3, 1.9, 1.6, 1.4, 1.3}, &reference);  // falls, but far behind fp32
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("above the fp32 reference"), std::string::npos) << *verdict;
}

TEST(ConvergenceGuard, ComparesOnlyTheWindowsBothTrajectoriesHave) {
  // A trial that stopped early (its throughput interval was tight) is compared with the
  // reference's same windows, not with the reference's later, lower losses; and vice versa.
  ConvergenceGuard guard;
  std::vector<double> reference = {2.3, 2.2, 2.06, 1.9, 1.58, 1.39, 1.15, 1.02, 0.93, 0.9, 0.91, 0.68, 0.83, 0.77};
  std::vector<double> shorter = {2.3, 2.2, 2.06, 1.9, 1.58, 1.39, 1.15, 1.02};
  EXPECT_FALSE(guard.check(shorter, &reference).has_value()) << *guard.check(shorter, &reference);
  EXPECT_FALSE(guard.check(reference, &shorter).has_value());
  std::vector<double> lagging = {2.3, 2.25, 2.2, 2.15, 2.1, 2.05, 2.0, 1.95};
  EXPECT_TRUE(guard.check(lagging, &reference).has_value());
}

TEST(ConvergenceGuard, ReferencePointResetsOnlyNumerics) {
  EXPECT_FALSE(ConvergenceGuard().reference_point({{"amp", "off"}, {"batch_size", 64}}).has_value());
  auto ref = ConvergenceGuard().reference_point({{"amp", "bf16"}, {"batch_size", 256}, {"tf32", true}});
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(*ref, (nlohmann::json{{"amp", "off"}, {"batch_size", 256}, {"tf32", false}}));
}

}  // namespace
}  // namespace dyno

namespace dyno {
namespace {

TEST(ConvergenceGuard, SameTrajectoryIgnoresKnobsThatDoNotChangeTheArithmetic) {
  nlohmann::json a = {{"amp", "off"}, {"batch_size", 128}, {"threads", 1}, {"num_workers", 0}, {"channels_last", false}};
  nlohmann::json b = {{"amp", "off"}, {"batch_size", 128}, {"threads", 2}, {"num_workers", 1}, {"channels_last", true}};
  EXPECT_TRUE(ConvergenceGuard::same_trajectory(a, b));
  b["batch_size"] = 256;
  EXPECT_FALSE(ConvergenceGuard::same_trajectory(a, b));
  b["batch_size"] = 128;
  b["amp"] = "bf16";
  EXPECT_FALSE(ConvergenceGuard::same_trajectory(a, b));
}

// A measured reference covers the first half of its candidate's windows, at least eight of them
// (or all the candidate has).
TEST(ConvergenceGuard, AReferenceCoversTheFirstHalfOfItsCandidatesWindows) {
  ConvergenceGuard guard;
  EXPECT_EQ(guard.reference_windows(22), 11u);
  EXPECT_EQ(guard.reference_windows(23), 12u);
  EXPECT_EQ(guard.reference_windows(12), 8u);
  EXPECT_EQ(guard.reference_windows(5), 5u);
}

}  // namespace
}  // namespace dyno
