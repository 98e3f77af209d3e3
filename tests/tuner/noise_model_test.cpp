#include "dyno/tuner/noise_model.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace dyno {
namespace {

// `points` points of `processes` figures each: a normal spread `sigma`, and a slow spell lowering
// a figure by `shift` with chance `chance`.
std::vector<PointEvidence> measured(int points, int processes, double sigma, double chance, double shift, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> spread(0.0, sigma);
  std::bernoulli_distribution slow(chance);
  std::uniform_real_distribution<double> value(5.0, 8.0);
  std::vector<PointEvidence> out;
  for (int p = 0; p < points; ++p) {
    PointEvidence e;
    const double truth = value(rng);
    for (int i = 0; i < processes; ++i) e.figures.push_back(truth + spread(rng) - (slow(rng) ? shift : 0.0));
    out.push_back(e);
  }
  return out;
}

TEST(NoiseModel, BeforeAnyPointIsMeasuredTwiceItIsThePriors) {
  const NoiseModel prior = NoiseModel::fit({PointEvidence{{7.0}}, PointEvidence{{6.0}}});
  EXPECT_DOUBLE_EQ(prior.sigma(), NoiseModel::kPriorSigma);
  EXPECT_DOUBLE_EQ(prior.slow_chance(), NoiseModel::kPriorSlowChance);
  EXPECT_DOUBLE_EQ(prior.slow_shift(), NoiseModel::kPriorSlowShift);
  EXPECT_DOUBLE_EQ(prior.degrees_of_freedom(), NoiseModel::kPriorSigmaWeight);
}

TEST(NoiseModel, FindsTheSpreadAndTheSlowSpellsOfTheProcesses) {
  const NoiseModel noise = NoiseModel::fit(measured(60, 4, 0.03, 0.1, 0.29, 1));
  EXPECT_NEAR(noise.sigma(), 0.03, 0.006);
  EXPECT_NEAR(noise.slow_chance(), 0.1, 0.04);
  EXPECT_NEAR(noise.slow_shift(), 0.29, 0.04);
  EXPECT_DOUBLE_EQ(noise.degrees_of_freedom(), NoiseModel::kPriorSigmaWeight + 60 * 3);
}

TEST(NoiseModel, AQuietMachineSoonShowsNoSlowSpells) {
  const NoiseModel noise = NoiseModel::fit(measured(20, 3, 0.02, 0.0, 0.0, 2));
  EXPECT_NEAR(noise.sigma(), 0.02, 0.006);
  EXPECT_LT(noise.slow_chance(), 0.2 * NoiseModel::kPriorSlowChance);
}

TEST(NoiseModel, APointMeasuredOnceMayHaveRunSlow) {
  const NoiseModel noise;  // the priors: 5% spread, 10% slow spells of 0.2
  const Posterior once = noise.posterior(PointEvidence{{7.0}});
  ASSERT_EQ(once.weights.size(), 2u);
  EXPECT_NEAR(once.weights[1], NoiseModel::kPriorSlowChance, 1e-12);
  EXPECT_NEAR(once.means[0], 7.0, 1e-12);
  EXPECT_NEAR(once.means[1], 7.0 + NoiseModel::kPriorSlowShift, 1e-12);
  EXPECT_NEAR(once.sds[0], NoiseModel::kPriorSigma, 1e-12);
  EXPECT_GT(once.sds[1], once.sds[0]);  // a slow spell's size varies
  EXPECT_NEAR(once.mean(), 7.0 + NoiseModel::kPriorSlowChance * NoiseModel::kPriorSlowShift, 1e-12);
}

TEST(NoiseModel, TheSlowShiftIsKnownAsWellAsTheSlowSpellsSeenTellIt) {
  const NoiseModel prior;
  const NoiseModel quiet = NoiseModel::fit(measured(20, 3, 0.02, 0.0, 0.0, 4));
  const NoiseModel seen = NoiseModel::fit(measured(60, 4, 0.03, 0.1, 0.29, 5));
  // Before any slow spell is seen, one twice the prior's shift is still a likely explanation.
  EXPECT_NEAR(prior.slow_spread(), std::hypot(NoiseModel::kSlowSpread * NoiseModel::kPriorSlowShift, NoiseModel::kPriorShiftSd), 1e-12);
  EXPECT_GT(prior.slow_spread(), 0.5 * NoiseModel::kPriorSlowShift);
  EXPECT_GT(quiet.slow_spread(), 0.5 * NoiseModel::kPriorSlowShift);  // no spell seen: nothing learnt of their size
  // Two dozen spells seen: the shift is known to a few percent, and the spread is mostly the spells' own.
  EXPECT_LT(seen.slow_spread(), 1.5 * NoiseModel::kSlowSpread * seen.slow_shift());
  const Posterior once = seen.posterior(PointEvidence{{7.0}});
  EXPECT_NEAR(once.sds[1], std::hypot(seen.sigma(), seen.slow_spread()), 1e-12);
  // Two slow processes of two: each spell's own spread counts twice, the one fitted shift's
  // uncertainty, which both share, four times.
  const Posterior twice = prior.posterior(PointEvidence{{7.0, 7.0}});
  const double own = NoiseModel::kSlowSpread * NoiseModel::kPriorSlowShift, shared = NoiseModel::kPriorShiftSd;
  EXPECT_NEAR(twice.sds[2], std::sqrt(2 * std::pow(NoiseModel::kPriorSigma, 2) + 2 * own * own + 4 * shared * shared) / 2, 1e-12);
}

TEST(NoiseModel, OneSlowFigureAmongAgreeingOnesCountsLittle) {
  const NoiseModel noise = NoiseModel::fit(measured(60, 4, 0.03, 0.1, 0.29, 3));
  const PointEvidence point{{7.0, 7.01, 6.99, 7.0 - noise.slow_shift()}};
  EXPECT_LT(point.mean(), 6.94);                                     // the plain mean is dragged down
  EXPECT_NEAR(noise.posterior(point).mean(), 7.0, 0.01);            // the posterior's is not
  const PointEvidence agreeing{{7.0, 7.01, 6.99, 7.0}};
  EXPECT_NEAR(noise.posterior(agreeing).mean(), agreeing.mean(), 0.005);  // all slow together is unlikely
}

// Time to target's model: the seeds' spread is all the noise there is.
TEST(NoiseModel, WithoutSlowSpellsEveryFigureCountsAsItReads) {
  const std::vector<PointEvidence> points = measured(60, 4, 0.03, 0.1, 0.29, 6);
  const NoiseModel plain = NoiseModel::fit(points, false);
  EXPECT_EQ(plain.slow_chance(), 0.0);
  EXPECT_GT(plain.sigma(), NoiseModel::fit(points).sigma());  // the slow figures widen the spread
  double squares = NoiseModel::kPriorSigmaWeight * NoiseModel::kPriorSigma * NoiseModel::kPriorSigma;
  for (const auto& p : points)
    for (double f : p.figures) squares += (f - p.mean()) * (f - p.mean());
  EXPECT_NEAR(plain.sigma(), std::sqrt(squares / plain.degrees_of_freedom()), 1e-9);
  const PointEvidence point{{7.0, 7.01, 6.99, 7.0 - 0.29}};
  const Posterior p = plain.posterior(point);
  ASSERT_EQ(p.weights.size(), 1u);
  EXPECT_NEAR(p.mean(), point.mean(), 1e-12);
  EXPECT_NEAR(p.sds[0], plain.sigma() / 2, 1e-12);
  EXPECT_EQ(NoiseModel::fit({}, false).slow_chance(), 0.0);  // before any repeat too
}

}  // namespace
}  // namespace dyno
