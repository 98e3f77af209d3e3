#include "dyno/tuner/trial.h"

#include <cmath>

#include <gtest/gtest.h>

#include "user_error_matcher.h"

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

// A hand-edited journal's figure that no trial measures (a text, a negative rate or duration) is
// refused, naming the field; a figure there was none of is null.
TEST(Trial, AJournalsFigureIsANumberAtLeastZeroOrNull) {
  Trial t = at_stage("grid");
  t.windows = {100, 110, 105};
  set_throughput_from_windows(t);
  nlohmann::json json = to_json(t);
  for (const auto& [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{{"samples_per_second", "fast"}, {"objective", -1.0}, {"wall_time_s", -1e9}}) {
    nlohmann::json edited = json;
    edited[field] = value;
    EXPECT_EQ(testing::error_of([&] { trial_from_json(edited, "line 3"); }),
              "[journal] line 3: field '" + field + "' is " + value.dump() + "; expected a finite number >= 0.0")
        << field;
  }
  json["samples_per_second"] = nullptr;
  EXPECT_TRUE(std::isnan(trial_from_json(json).samples_per_second));
}

}  // namespace
}  // namespace dyno
