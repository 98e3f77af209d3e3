#include "tuner/target_time_cap.h"

#include <map>
#include <utility>

#include <gtest/gtest.h>

#include "tuner/search_space.h"
#include "tuner/trial_executor.h"
#include "tuner/tuner.h"

namespace dyno {
namespace {

// Time to target by (threads, seed = budget level), in seconds.
class TimesExecutor : public TrialExecutor {
 public:
  explicit TimesExecutor(std::map<std::pair<int64_t, int64_t>, double> times) : times_(std::move(times)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    const double s = times_.at({point["threads"].get<int64_t>(), request.budget_level});
    t.time_to_target_s = s;
    t.wall_time_s = s;
    t.samples_per_second = 1000;
    return t;
  }

 private:
  std::map<std::pair<int64_t, int64_t>, double> times_;
};

SearchSpace threads_space() {
  SearchSpace s;
  s.set_axis("threads", {1, 2, 4});
  return s;
}

TunerOptions to_target() {
  TunerOptions o;
  o.objective = "time-to-target";
  return o;
}

TEST(TargetTimeCap, TheSearchCapFollowsTheBestSoFarWithAMargin) {
  TimesExecutor executor({{{1, 1}, 40.0}, {{2, 1}, 30.0}});
  Tuner tuner(threads_space(), {{"threads", 1}}, executor, to_target());
  EXPECT_EQ(search_time_cap(tuner, 900), 900);  // nothing measured yet
  tuner.measure({{"threads", 1}}, "grid");
  EXPECT_DOUBLE_EQ(search_time_cap(tuner, 900), 40 * 1.3 + 5);
  tuner.measure({{"threads", 2}}, "grid");
  EXPECT_DOUBLE_EQ(search_time_cap(tuner, 900), 30 * 1.3 + 5);
  EXPECT_EQ(search_time_cap(tuner, 20), 20);  // never above --verify-cap
}

// Session 9: the best point's second seed reached the target in 25 s, and the search cap that
// followed it (38 s) cut the third seed of another finalist, which needed one more epoch (39 s);
// the finalists raced after it ran under looser caps. The race's cap comes from the
// first seeds only, so it is the same for every finalist, and it lets through a seed that needs
// half as long again as the best first seed.
TEST(TargetTimeCap, EveryFinalistsSeedsRunUnderOneCapThatLetsASlowerSeedThrough) {
  TimesExecutor executor({{{1, 1}, 30.0}, {{2, 1}, 26.0}, {{4, 1}, 27.0},  //
                          {{2, 2}, 25.0}, {{2, 3}, 39.0}, {{4, 2}, 39.0}, {{4, 3}, 26.0}});
  Tuner tuner(threads_space(), {{"threads", 1}}, executor, to_target());
  for (int64_t threads : {1, 2, 4}) tuner.measure({{"threads", threads}}, "grid");
  const double cap = race_time_cap(tuner, 900);
  EXPECT_GE(cap, 26.0 * 1.5 + 5);
  tuner.measure({{"threads", 2}}, "race", 2);  // 25 s: the best so far, at the top level
  EXPECT_EQ(race_time_cap(tuner, 900), cap);
  EXPECT_GT(race_time_cap(tuner, 900), 39.0);  // seed 3 of two threads, seed 2 of four
  EXPECT_LT(search_time_cap(tuner, 900), 39.0);        // what the search cap would have cut
  tuner.measure({{"threads", 2}}, "race", 3);
  tuner.measure({{"threads", 4}}, "race", 2);
  EXPECT_EQ(race_time_cap(tuner, 900), cap);
  EXPECT_EQ(race_time_cap(tuner, 30), 30);  // never above --verify-cap
}

}  // namespace
}  // namespace dyno
