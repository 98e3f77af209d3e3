#include "dyno/tuner/verification.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "synthetic_executor.h"
#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

// Trains to the target in `seconds` for each seed (the point's `seed`, else the budget level's).
class ToTargetExecutor : public TrialExecutor {
 public:
  ToTargetExecutor(std::vector<double> seconds, bool seed_from_level) : seconds_(std::move(seconds)), seed_from_level_(seed_from_level) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    runs.emplace_back(name, point);
    const int64_t seed = seed_from_level_ ? request.budget_level - 1 : point.value("seed", int64_t{10}) - 10;
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    if (seconds_.at(static_cast<size_t>(seed)) > 0) t.time_to_target_s = seconds_.at(static_cast<size_t>(seed));
    else t.outcome = Outcome::Rejected;
    return t;
  }
  std::vector<std::pair<std::string, nlohmann::json>> runs;  // (name, point) of each run

 private:
  std::vector<double> seconds_;  // per seed; 0 = misses the target
  bool seed_from_level_;
};

Tuner to_target_tuner(TrialExecutor& executor) {
  TunerOptions options;
  options.objective = "time-to-target";
  return Tuner(testing::synthetic_space(), {{"batch_size", 64}}, executor, options);
}

TEST(Verification, OnePairPerSeedAndTheSpeedupIsTotalDefaultTimeOverTotalTunedTime) {
  ToTargetExecutor tuned({2.0, 3.0}, false), fallback({5.0, 4.0}, false);
  Tuner tuner = to_target_tuner(tuned);
  const nlohmann::json best = {{"batch_size", 256}};
  const auto v = verify_against_default(tuner, tuned, fallback, best, {2, 10, false});
  EXPECT_DOUBLE_EQ(v["speedup"].get<double>(), 9.0 / 5.0);
  ASSERT_EQ(v["seeds"].size(), 2u);
  EXPECT_EQ(v["seeds"][0]["seed"], 10);
  EXPECT_DOUBLE_EQ(v["seeds"][0]["speedup"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(v["seeds"][1]["speedup"].get<double>(), 4.0 / 3.0);
  EXPECT_EQ(v["best"], v["seeds"][0]["best"]);
  // The first pair keeps the base seed and the plain labels; the next pair moves the `seed` knob
  // of both sides; the default is the empty point (the base configuration).
  const std::vector<std::pair<std::string, nlohmann::json>> tuned_runs = {
      {"verify-best", best}, {"verify-best-seed1", {{"batch_size", 256}, {"seed", 11}}}};
  EXPECT_EQ(tuned.runs, tuned_runs);
  const std::vector<std::pair<std::string, nlohmann::json>> default_runs = {
      {"verify-default", nlohmann::json::object()}, {"verify-default-seed1", {{"seed", 11}}}};
  EXPECT_EQ(fallback.runs, default_runs);
  // Runs after the search: journaled as the tuner's, not part of its cost.
  EXPECT_EQ(tuner.trials().size(), 4u);
  EXPECT_EQ(tuner.executed_trials(), 0);
  EXPECT_EQ(tuner.trials()[0].key, "verify:best:" + best.dump());
}

TEST(Verification, AMissedTargetLeavesThePairsAndTheTotalWithoutASpeedup) {
  ToTargetExecutor tuned({2.0, 3.0}, true), fallback({5.0, 0.0}, true);
  Tuner tuner = to_target_tuner(tuned);
  const auto v = verify_against_default(tuner, tuned, fallback, {{"batch_size", 256}}, {2, 7, true});
  EXPECT_TRUE(v["speedup"].is_null());
  EXPECT_DOUBLE_EQ(v["seeds"][0]["speedup"].get<double>(), 2.5);
  EXPECT_TRUE(v["seeds"][1]["speedup"].is_null());
  EXPECT_EQ(v["seeds"][1]["default"]["outcome"], "rejected");
  EXPECT_EQ(v["seeds"][1]["seed"], 8);
  // A program's seed is its budget level: the points stay as they are.
  EXPECT_EQ(tuned.runs[1].second, (nlohmann::json{{"batch_size", 256}}));
  EXPECT_EQ(tuner.trials()[2].budget_level, 2);
}

}  // namespace
}  // namespace dyno
