#include "dyno/tuner/decision.h"

#include <cmath>

#include <gtest/gtest.h>

namespace dyno {
namespace {

PointEvidence figures(std::initializer_list<double> throughputs) {
  PointEvidence e;
  for (double t : throughputs) e.figures.push_back(std::log(t));
  return e;
}

// A noise model that has seen `dof` degrees of freedom at `sigma` between processes (prior aside).
NoiseModel noise_of(double sigma, int dof) {
  std::vector<PointEvidence> points;
  for (int i = 0; i < dof; ++i) points.push_back(figures({std::exp(sigma), std::exp(-sigma)}));  // each pair: 2 sigma^2 over 1 dof
  return NoiseModel::fit(points);
}

TEST(Decision, SeparatedEstimatesAreBetterAndWorse) {
  const NoiseModel noise = noise_of(0.01, 20);
  const DecisionRule rule;
  EXPECT_EQ(decide(figures({110, 111}), figures({100, 99}), noise, rule).verdict, Verdict::FirstBetter);
  EXPECT_EQ(decide(figures({100, 99}), figures({110, 111}), noise, rule).verdict, Verdict::SecondBetter);
}

TEST(Decision, AnIntervalWithinTheMarginIsEquivalent) {
  const NoiseModel noise = noise_of(0.002, 50);
  const Comparison c = decide(figures({100.5, 100.5, 100.5, 100.5}), figures({100, 100, 100, 100}), noise, DecisionRule{});
  EXPECT_EQ(c.verdict, Verdict::Equivalent);
  EXPECT_NEAR(c.difference, std::log(1.005), 1e-12);
  EXPECT_GT(c.low, -0.02);
  EXPECT_LT(c.high, 0.02);
}

TEST(Decision, AnIntervalAcrossZeroAndBeyondTheMarginIsNotKnown) {
  const NoiseModel noise = noise_of(0.05, 4);
  const Comparison c = decide(figures({104}), figures({100}), noise, DecisionRule{});
  EXPECT_EQ(c.verdict, Verdict::Unknown);
  EXPECT_LT(c.low, 0);
  EXPECT_GT(c.high, 0.02);
  // More processes of both points narrow it to an answer.
  EXPECT_EQ(decide(figures({104, 104, 104, 104, 104, 104, 104, 104}), figures({100, 100, 100, 100, 100, 100, 100, 100}), noise_of(0.01, 20),
                   DecisionRule{})
                .verdict,
            Verdict::FirstBetter);
}

TEST(Decision, AFailedPointLosesAndTwoFailedPointsAreEquivalent) {
  const NoiseModel noise;
  PointEvidence failed = figures({200});
  failed.failed = true;
  EXPECT_EQ(decide(failed, figures({100}), noise, DecisionRule{}).verdict, Verdict::SecondBetter);
  EXPECT_EQ(decide(figures({100}), failed, noise, DecisionRule{}).verdict, Verdict::FirstBetter);
  EXPECT_EQ(decide(failed, failed, noise, DecisionRule{}).verdict, Verdict::Equivalent);
  EXPECT_EQ(decide(PointEvidence{}, figures({100}), noise, DecisionRule{}).verdict, Verdict::SecondBetter);  // never measured
}

TEST(Decision, AtTheCapNotKnownGoesToTheHigherEstimate) {
  Comparison c;
  c.difference = 0.03;
  EXPECT_EQ(settle(c), Verdict::FirstBetter);
  c.difference = -0.03;
  EXPECT_EQ(settle(c), Verdict::SecondBetter);
  c.difference = 0.005;  // within the margin, but not shown equivalent: still the higher estimate
  EXPECT_EQ(settle(c), Verdict::FirstBetter);
  c.verdict = Verdict::Equivalent;  // a known answer stands
  EXPECT_EQ(settle(c), Verdict::Equivalent);
  c.verdict = Verdict::SecondBetter;
  EXPECT_EQ(settle(c), Verdict::SecondBetter);
}

// A comparison whose difference has one normal posterior.
Comparison normal_difference(double difference, double standard_error) {
  Comparison c;
  c.difference = difference;
  c.posterior = Posterior{{1.0}, {difference}, {standard_error}};
  return c;
}

TEST(Decision, TheExpectedLossOfTakingTheHigherEstimateShrinksWithTheGapAndTheNoise) {
  const Comparison tied = normal_difference(0, 0.02);
  EXPECT_NEAR(expected_loss(tied), 0.02 * 0.398942, 1e-6);  // se * pdf(0)
  const Comparison apart = normal_difference(0.06, 0.02);  // three standard errors
  EXPECT_LT(expected_loss(apart), 0.0002);
  const Comparison precise = normal_difference(0, 0.001);
  EXPECT_LT(expected_loss(precise), DecisionRule{}.indifference);  // a tie measured this well costs little
  EXPECT_GT(expected_loss(tied), DecisionRule{}.indifference);
  EXPECT_TRUE(answered(precise, DecisionRule{}));
  EXPECT_FALSE(answered(tied, DecisionRule{}));
}

// A loss seen in one process, about a slow spell's size, may be a win in a slow process: not
// answered, so the loser runs again. A loss far beyond a slow spell is answered at once.
TEST(Decision, ALossWithinASlowSpellOfOneProcessIsNotAnswered) {
  // A 2% spread, and a slow spell of 25% in three of the repeated points.
  std::vector<PointEvidence> repeated;
  for (int i = 0; i < 30; ++i) repeated.push_back(figures({std::exp(0.02), std::exp(-0.02)}));
  for (int i = 0; i < 3; ++i) repeated.push_back(figures({100, 100.5, 75}));
  const NoiseModel noise = NoiseModel::fit(repeated);
  const PointEvidence incumbent = figures({100, 101, 99});
  const Comparison within = decide(figures({85}), incumbent, noise, DecisionRule{});
  EXPECT_LT(within.difference, -0.1);
  EXPECT_GT(within.high, 0.0);
  EXPECT_FALSE(answered(within, DecisionRule{}));
  const Comparison beyond = decide(figures({60}), incumbent, noise, DecisionRule{});
  EXPECT_EQ(beyond.verdict, Verdict::SecondBetter);
  EXPECT_TRUE(answered(beyond, DecisionRule{}));
  // Seen again in a second process, the loss stands.
  EXPECT_TRUE(answered(decide(figures({85, 85.5}), incumbent, noise, DecisionRule{}), DecisionRule{}));
}

// A 95% verdict alone does not end a comparison whose wrong answer could still cost more than the
// indifference; equivalence does.
TEST(Decision, AVerdictAloneIsNotAnAnswer) {
  Comparison c = normal_difference(0.01, 0.02);
  c.verdict = Verdict::FirstBetter;
  EXPECT_GT(expected_loss(c), DecisionRule{}.indifference);
  EXPECT_FALSE(answered(c, DecisionRule{}));
  c.verdict = Verdict::Equivalent;
  EXPECT_TRUE(answered(c, DecisionRule{}));
}

}  // namespace
}  // namespace dyno
