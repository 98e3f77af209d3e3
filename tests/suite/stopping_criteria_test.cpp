#include "dyno/suite/stopping_criteria.h"

#include <gtest/gtest.h>

namespace dyno {
namespace {

using Parameters = StoppingCriteria::Parameters;

std::vector<double> windows(std::initializer_list<double> values) { return values; }

TEST(StoppingCriteria, StableOnceSixTightWindowsAreIn) {
  Parameters p;
  p.max_relative_ci = 0.02;
  const StoppingCriteria criteria(p);
  EXPECT_EQ(criteria.after_window(windows({100, 100.5, 99.5, 100.2, 99.8})), "");  // five: no 95% interval yet
  EXPECT_EQ(criteria.after_window(windows({100, 100.5, 99.5, 100.2, 99.8, 100.1})), "stable");
  EXPECT_EQ(criteria.after_window(windows({100, 130, 80, 110, 90, 120})), "");  // too wide
}

TEST(StoppingCriteria, OutpacedWhenTheWholeIntervalIsBelowTheBarForTheJob) {
  Parameters p;
  p.stop_below = 250;
  p.ranks = 2;  // windows are per rank: 100 per rank is 200 for the job
  const StoppingCriteria criteria(p);
  EXPECT_EQ(criteria.after_window(windows({100, 101, 99, 100, 102, 98})), "outpaced");
  EXPECT_EQ(criteria.after_window(windows({100, 101, 99, 100, 102, 130})), "");  // its upper end (130 x 2) clears the bar
  p.ranks = 3;
  EXPECT_EQ(StoppingCriteria(p).after_window(windows({100, 101, 99, 100, 102, 98})), "");  // 300 for the job
}

TEST(StoppingCriteria, StableWinsWhenBothHoldAndEachIsOffAtZero) {
  Parameters p;
  p.max_relative_ci = 0.05;
  p.stop_below = 1000;
  const auto tight = windows({100, 100, 100, 100, 100, 100});
  EXPECT_EQ(StoppingCriteria(p).after_window(tight), "stable");
  p.max_relative_ci = 0;
  EXPECT_EQ(StoppingCriteria(p).after_window(tight), "outpaced");
  p.stop_below = 0;
  EXPECT_EQ(StoppingCriteria(p).after_window(tight), "");
}

TEST(StoppingCriteria, TargetStopsOnlyWhenAskedAndFollowsTheMetricsDirection) {
  Parameters p;
  p.target = 0.9;
  StoppingCriteria keep_going(p);
  EXPECT_EQ(keep_going.after_evaluation(0.95), "");
  EXPECT_TRUE(keep_going.reached(0.95));
  p.stop_at_target = true;
  StoppingCriteria stop(p);
  EXPECT_EQ(stop.after_evaluation(0.85), "");
  EXPECT_EQ(stop.after_evaluation(0.9), "target_reached");
  p.higher_is_better = false;  // a loss: 0.9 or lower
  StoppingCriteria loss(p);
  EXPECT_EQ(loss.after_evaluation(1.2), "");
  EXPECT_EQ(loss.after_evaluation(0.7), "target_reached");
}

TEST(StoppingCriteria, PlateauCountsEvaluationsInARowWithoutANewBest) {
  Parameters p;
  p.target = 1.0;
  p.plateau_patience = 2;
  StoppingCriteria criteria(p);
  EXPECT_EQ(criteria.after_evaluation(0.5), "");
  EXPECT_EQ(criteria.after_evaluation(0.5), "");  // equal is not better: one
  EXPECT_EQ(criteria.after_evaluation(0.6), "");  // a new best resets the count
  EXPECT_EQ(criteria.after_evaluation(0.55), "");
  EXPECT_EQ(criteria.after_evaluation(0.58), "plateau");
}

// A resumed run starts where its saved evaluations left the rules: on a plateau once the count
// restored reaches the patience, at the target once it was reached and the run stops there.
TEST(StoppingCriteria, TheStandingIsWhereTheSavedEvaluationsLeftTheRules) {
  Parameters p;
  p.target = 0.9;
  p.plateau_patience = 2;
  p.stop_at_target = true;
  StoppingCriteria criteria(p);
  EXPECT_EQ(criteria.standing(false), "");
  criteria.restore(0.8, 1);
  EXPECT_EQ(criteria.standing(false), "");
  criteria.restore(0.8, 2);
  EXPECT_EQ(criteria.standing(false), "plateau");
  criteria.restore(0.95, 0);
  EXPECT_EQ(criteria.standing(true), "target_reached");
  p.stop_at_target = false;
  EXPECT_EQ(StoppingCriteria(p).standing(true), "");
}

}  // namespace
}  // namespace dyno
