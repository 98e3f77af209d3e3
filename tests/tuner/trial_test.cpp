#include "dyno/tuner/trial.h"

#include <gtest/gtest.h>

namespace dyno {
namespace {

Trial at_stage(const std::string& stage) {
  Trial t;
  t.stage = stage;
  return t;
}

TEST(Trial, ItsRoleFollowsTheStageThatAskedForIt) {
  EXPECT_EQ(at_stage("batch-grow").role(), TrialRole::Search);
  EXPECT_EQ(at_stage("race").role(), TrialRole::Search);
  EXPECT_EQ(at_stage(kGuardReferenceStage).role(), TrialRole::GuardReference);
  EXPECT_EQ(at_stage(kVerifyStage).role(), TrialRole::Verify);
  EXPECT_EQ(at_stage(kProfileStage).role(), TrialRole::Profile);
  // Candidates for the best: a search's measurements, the race's included; not the guard's
  // references, nor the runs after the search (which are not part of its cost either).
  EXPECT_TRUE(at_stage("knobs").candidate());
  EXPECT_TRUE(at_stage("race").candidate());
  EXPECT_FALSE(at_stage(kGuardReferenceStage).candidate());
  EXPECT_FALSE(at_stage(kGuardReferenceStage).after_search());
  for (const char* stage : {kVerifyStage, kProfileStage}) {
    EXPECT_FALSE(at_stage(stage).candidate()) << stage;
    EXPECT_TRUE(at_stage(stage).after_search()) << stage;
  }
  Trial failed = at_stage("knobs");
  failed.outcome = Outcome::Crashed;
  EXPECT_FALSE(failed.candidate());
}

TEST(Trial, RoundTripsThroughTheJournalsJson) {
  Trial t = at_stage(kProfileStage);
  t.id = 7;
  t.key = "profile:best:{}";
  t.point = {{"batch_size", 64}};
  t.windows = {100, 110, 105};
  set_throughput_from_windows(t);
  const Trial back = trial_from_json(to_json(t));
  EXPECT_EQ(to_json(back), to_json(t));
  EXPECT_EQ(back.role(), TrialRole::Profile);
}

}  // namespace
}  // namespace dyno
