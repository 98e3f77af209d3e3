#include "dyno/tuner/time_to_target.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dyno/tuner/search_space.h"
#include "dyno/tuner/trial_executor.h"
#include "dyno/tuner/tuner.h"

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

TEST(TimeToTarget, TheSearchCapFollowsTheBestSoFarWithAMargin) {
  TimesExecutor executor({{{1, 1}, 40.0}, {{2, 1}, 30.0}});
  Tuner tuner(threads_space(), {{"threads", 1}}, executor, to_target());
  EXPECT_EQ(search_time_cap(tuner, 900), 900);  // nothing measured yet
  tuner.measure({{"threads", 1}}, "grid");
  EXPECT_DOUBLE_EQ(search_time_cap(tuner, 900), 40 * 1.3 + 5);
  tuner.measure({{"threads", 2}}, "grid");
  EXPECT_DOUBLE_EQ(search_time_cap(tuner, 900), 30 * 1.3 + 5);
  EXPECT_EQ(search_time_cap(tuner, 20), 20);  // never above --verify-cap
}

// A cap that followed the best time so far would tighten as the race goes (the best's second seed
// reaching the target in 25 s gives 38 s) and cut a finalist's seed that needs one more epoch
// (39 s), disqualifying it, while finalists raced earlier ran under looser caps. The race's cap
// comes from the first seeds only, so it is the same for every finalist, and it lets through a
// seed that needs half as long again as the best first seed.
TEST(TimeToTarget, EveryFinalistsSeedsRunUnderOneCapThatLetsASlowerSeedThrough) {
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

TEST(TimeToTarget, PhaseTwoTakesTheConvergenceAxesAndAddsTheDefaultsNotGiven) {
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  space.set_axis("schedule", {"cosine", "onecycle"});
  space.set_axis("lr_scaling", {"sqrt"});  // one value: a setting phase 1 measures with
  const SearchSpace target = take_convergence_axes(space, {12, true});
  ASSERT_NE(target.find("schedule"), nullptr);
  EXPECT_EQ(target.find("schedule")->values, (std::vector<nlohmann::json>{"cosine", "onecycle"}));
  ASSERT_NE(target.find("epochs"), nullptr);
  EXPECT_EQ(target.find("epochs")->values, (std::vector<nlohmann::json>{2, 3, 4, 0}));  // 1/6, 1/4, 1/3, the recipe's
  ASSERT_NE(target.find("label_smoothing"), nullptr);
  EXPECT_EQ(space.find("schedule"), nullptr);
  EXPECT_NE(space.find("lr_scaling"), nullptr);
  EXPECT_NE(space.find("batch_size"), nullptr);

  SearchSpace loss_space;
  loss_space.set_axis("batch_size", {64, 128});
  const SearchSpace loss_target = take_convergence_axes(loss_space, {12, false});
  EXPECT_EQ(loss_target.find("label_smoothing"), nullptr);  // it would raise a loss target
  EXPECT_EQ(loss_target.find("schedule")->values, (std::vector<nlohmann::json>{"auto", "onecycle"}));
}

TEST(TimeToTarget, EveryBatchOfPhaseOneAboveTheRecipesUpToTheWinnersAndAtLeastTheNextIsARefinement) {
  SearchSpace throughput;
  throughput.set_axis("batch_size", {64, 512, 128, 256, 32});
  using Batches = std::vector<int64_t>;
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 256}}, 64), (Batches{128, 256}));
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 512}}, 64), (Batches{128, 256, 512}));  // the smallest first
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 128}}, 64), (Batches{128}));
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 64}}, 64), (Batches{128}));  // a throughput tie went to 64
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 512}}, 512), Batches{});     // none above the recipe's
  EXPECT_EQ(larger_batches(throughput, {{"batch_size", 32}}, 64), Batches{});       // the grid runs at the winner's batch
  EXPECT_EQ(larger_batches(SearchSpace{}, {{"batch_size", 256}}, 64), Batches{});  // phase 1 did not search the batch
}

TEST(TimeToTarget, ThePhaseRunsTheGridThenTheLearningRateAroundItsFastestThenARaceOnTheNextSeed) {
  TimesExecutor executor({{{1, 1}, 40.0}, {{2, 1}, 30.0}, {{4, 1}, 32.0}, {{1, 2}, 40.0}, {{2, 2}, 31.0}, {{4, 2}, 30.0}});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(threads_space(), {{"threads", 1}}, executor, options);
  TargetPhaseOptions plan_options;
  plan_options.seeds = 2;
  plan_options.learning_rate = [](const nlohmann::json&) { return std::optional<double>(0.1); };
  TargetPhase plan(plan_options);
  const double search_cap = plan.next_time_cap(tuner);
  plan.run(tuner);

  std::vector<std::string> stages;
  for (const auto& t : tuner.trials()) stages.push_back(t.stage);
  EXPECT_EQ(stages, (std::vector<std::string>{"grid", "grid", "grid", "refine-lr", "refine-lr", "refine-lr", "refine-lr", "refine-lr",
                                               "refine-lr", "race", "race", "race"}));
  // Around the grid's fastest point (two threads, 30 s): its LR doubled, which reaches the target,
  // at the axis's other values, then halved, the same.
  EXPECT_EQ(tuner.trials()[3].point, (nlohmann::json{{"threads", 2}, {"lr", 0.2}}));
  EXPECT_EQ(tuner.trials()[4].point, (nlohmann::json{{"threads", 1}, {"lr", 0.2}}));
  EXPECT_EQ(tuner.trials()[5].point, (nlohmann::json{{"threads", 4}, {"lr", 0.2}}));
  EXPECT_EQ(tuner.trials()[6].point, (nlohmann::json{{"threads", 2}, {"lr", 0.05}}));
  // The race trains each finalist on its second seed.
  for (size_t i = 9; i < 12; ++i) EXPECT_EQ(tuner.trials()[i].budget_level, 2);
  // The search's cap before the grid (nothing measured), then the race's from the best first seed.
  EXPECT_EQ(search_cap, 900);
  EXPECT_DOUBLE_EQ(plan.next_time_cap(tuner), 30 * 2 + 10);
}

// The recipe's LR at a point's batch: 0.125 at batch 64 (the recipe's, the grid's when the point has
// none), scaled linearly.
double recipe_lr(const nlohmann::json& point) { return 0.125 * static_cast<double>(point.value("batch_size", int64_t{64})) / 64; }

// Time to target by (epochs, batch_size), 2 s less with the LR above the recipe's at that batch and
// 5 s more below it: the LR refinement starts from the grid's fastest point, and the batch
// refinement from the fastest of both, at its horizon and the shorter ones (not the recipe's,
// epochs 0: 12 here), with its LR as the same multiple of the recipe's at each batch.
TEST(TimeToTarget, TheGridsFastestPointIsTriedAtOtherLearningRatesThenTheFastestAtLargerBatchesAndShorterHorizons) {
  class BatchExecutor : public TrialExecutor {
   public:
    Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
      const std::map<std::pair<int64_t, int64_t>, double> times = {
          {{2, 64}, 40.0}, {{4, 64}, 30.0}, {{0, 64}, 50.0}, {{4, 128}, 32.0}, {{2, 128}, 27.0}, {{4, 256}, 33.0}, {{2, 256}, 29.0}};
      Trial t;
      t.point = point;
      t.budget_level = request.budget_level;
      const double recipe = recipe_lr(point), lr = point.value("lr", recipe);
      t.time_to_target_s = times.at({point["epochs"].get<int64_t>(), point.value("batch_size", int64_t{64})}) + (lr > recipe ? -2 : lr < recipe ? 5 : 0);
      t.wall_time_s = *t.time_to_target_s;
      return t;
    }
  } executor;
  SearchSpace space;
  space.set_axis("epochs", {2, 4, 0});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, {{"epochs", 0}}, executor, options);
  TargetPhaseOptions plan_options;
  plan_options.batches = {128, 256};
  plan_options.recipe_epochs = 12;
  plan_options.learning_rate = [](const nlohmann::json& p) { return std::optional<double>(p.value("lr", recipe_lr(p))); };
  TargetPhase(plan_options).run(tuner);

  std::vector<std::pair<std::string, nlohmann::json>> runs;
  for (const auto& t : tuner.trials())
    if (t.stage != "race") runs.emplace_back(t.stage, t.point);
  const std::vector<std::pair<std::string, nlohmann::json>> expected = {
      {"grid", {{"epochs", 2}}},
      {"grid", {{"epochs", 4}}},
      {"grid", {{"epochs", 0}}},
      {"refine-lr", {{"epochs", 4}, {"lr", 0.25}}},
      {"refine-lr", {{"epochs", 4}, {"lr", 0.0625}}},
      {"refine-batch", {{"epochs", 4}, {"batch_size", 128}, {"lr", 0.5}}},  // twice the recipe's, as at 64
      {"refine-batch", {{"epochs", 2}, {"batch_size", 128}, {"lr", 0.5}}},
      {"refine-batch", {{"epochs", 4}, {"batch_size", 256}, {"lr", 1.0}}},
      {"refine-batch", {{"epochs", 2}, {"batch_size", 256}, {"lr", 1.0}}}};
  EXPECT_EQ(runs, expected);
  EXPECT_EQ(tuner.best()->point, (nlohmann::json{{"epochs", 2}, {"batch_size", 128}, {"lr", 0.5}}));
  // The ETA's plan: the grid, two batches at up to three horizons, two LRs each on up to two
  // horizons, three finalists on one seed.
  const int64_t planned = TargetPhase(plan_options).expected_trials(space);
  EXPECT_EQ(planned, 3 + 2 * 3 + 2 * 2 + 3);
  EXPECT_LE(tuner.executed_trials(), planned);
}

// Time to target by (point, seed = budget level); a point not listed misses the target.
class PointTimesExecutor : public TrialExecutor {
 public:
  explicit PointTimesExecutor(std::map<std::pair<std::string, int64_t>, double> times) : times_(std::move(times)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.wall_time_s = 60;
    if (const auto it = times_.find({point.dump(), request.budget_level}); it != times_.end()) t.time_to_target_s = t.wall_time_s = it->second;
    return t;
  }

 private:
  std::map<std::pair<std::string, int64_t>, double> times_;
};

// On the first seed the four-epoch horizon reaches the target at epoch 2 with every schedule, a
// little sooner than the two-epoch horizon does; on the next seeds it needs epoch 3. (The three
// fastest on the first seed are all four-epoch points.)
TEST(TimeToTarget, TheRaceTakesTheFastestPointOfEachHorizonBeforeTheNextFastestOfOne) {
  auto point = [](int64_t epochs, const char* schedule) { return nlohmann::json{{"epochs", epochs}, {"schedule", schedule}}; };
  std::map<std::pair<std::string, int64_t>, double> times;
  for (int64_t seed = 1; seed <= 3; ++seed) {
    times[{point(4, "auto").dump(), seed}] = seed == 1 ? 29.0 : 45.0;
    times[{point(4, "onecycle").dump(), seed}] = seed == 1 ? 29.5 : 46.0;
    times[{point(4, "cosine").dump(), seed}] = seed == 1 ? 30.0 : 44.0;
    times[{point(2, "onecycle").dump(), seed}] = seed == 1 ? 31.0 : 32.0;
  }
  times[{point(2, "auto").dump(), 1}] = 33.0;
  PointTimesExecutor executor(times);
  SearchSpace space;
  space.set_axis("epochs", {2, 4});
  space.set_axis("schedule", {"auto", "onecycle", "cosine"});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, point(4, "auto"), executor, options);
  tuner.run();
  EXPECT_EQ(race_finalists(tuner, 3), (std::vector<nlohmann::json>{point(4, "auto"), point(2, "onecycle"), point(4, "onecycle")}));
  EXPECT_EQ(race_finalists(tuner, 1), (std::vector<nlohmann::json>{point(4, "auto")}));

  TargetPhaseOptions plan_options;
  plan_options.seeds = 3;
  TargetPhase(plan_options).run(tuner);
  EXPECT_EQ(tuner.best()->point, point(2, "onecycle"));
}

// Runs to the target by point: seconds, epochs to the evaluation that reached it and the margin
// there, the same on every seed; a point not listed misses the target.
class RunsExecutor : public TrialExecutor {
 public:
  struct Run {
    double seconds;
    double epochs;
    double margin;
  };
  explicit RunsExecutor(std::map<std::string, Run> runs) : runs_(std::move(runs)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.wall_time_s = 60;
    if (const auto it = runs_.find(point.dump()); it != runs_.end()) {
      t.time_to_target_s = t.wall_time_s = it->second.seconds;
      t.epochs_to_target = it->second.epochs;
      t.target_margin = it->second.margin;
    }
    measured.push_back(point);
    return t;
  }
  std::vector<nlohmann::json> measured;

 private:
  std::map<std::string, Run> runs_;
};

// On the search's seed three points reach the target at the same epoch (the same work): one-cycle
// on two epochs the soonest, in a faster process, but only just; the recipe's schedule passes it by
// more on both horizons. One-cycle on four epochs passes it by the most, an epoch later.
TEST(TimeToTarget, AmongPointsThatReachedTheTargetAfterTheSameEpochsTheLargerMarginRanksFirst) {
  auto point = [](int64_t epochs, const char* schedule) { return nlohmann::json{{"epochs", epochs}, {"schedule", schedule}}; };
  RunsExecutor executor({{point(2, "onecycle").dump(), {30.0, 2, 0.0005}},
                         {point(2, "auto").dump(), {31.0, 2, 0.003}},
                         {point(4, "auto").dump(), {32.0, 2, 0.002}},
                         {point(4, "onecycle").dump(), {33.0, 3, 0.004}}});
  SearchSpace space;
  space.set_axis("epochs", {2, 4});
  space.set_axis("schedule", {"auto", "onecycle"});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, point(4, "auto"), executor, options);
  tuner.run();
  EXPECT_EQ(race_finalists(tuner, 4), (std::vector<nlohmann::json>{point(2, "auto"), point(4, "auto"), point(2, "onecycle"), point(4, "onecycle")}));
}

// The same at any batch: batch 256 reaches the target at epoch 2 a little sooner (its throughput),
// batch 128 at the same epoch (within 1%: the epochs' last batches differ) by a larger margin.
TEST(TimeToTarget, AmongPointsThatReachedTheTargetAfterTheSameEpochsAtAnyBatchTheLargerMarginRanksFirst) {
  auto point = [](int64_t batch) { return nlohmann::json{{"batch_size", batch}, {"epochs", 2}}; };
  RunsExecutor executor({{point(256).dump(), {28.9, 2.0, 0.0016}}, {point(128).dump(), {29.7, 1.997, 0.0019}}, {point(64).dump(), {29.0, 2.5, 0.004}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128, 256});
  space.set_axis("epochs", {2});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, point(64), executor, options);
  tuner.run();
  EXPECT_EQ(race_finalists(tuner, 3), (std::vector<nlohmann::json>{point(128), point(256), point(64)}));
}

// The same for where the batch refinement starts: one-cycle is the soonest on the search's seed,
// the recipe's schedule reaches the target at the same epoch by a larger margin.
TEST(TimeToTarget, TheBatchRefinementStartsFromTheLargerMarginAmongPointsThatDidTheSameWork) {
  auto point = [](const char* schedule) { return nlohmann::json{{"epochs", 2}, {"schedule", schedule}}; };
  RunsExecutor executor({{point("onecycle").dump(), {30.0, 2, 0.0005}}, {point("auto").dump(), {31.0, 2, 0.003}}});
  SearchSpace space;
  space.set_axis("epochs", {2});
  space.set_axis("schedule", {"onecycle", "auto"});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, point("auto"), executor, options);
  TargetPhaseOptions plan_options;
  plan_options.batches = {128};
  TargetPhase(plan_options).run(tuner);
  ASSERT_GE(executor.measured.size(), 3u);
  EXPECT_EQ(executor.measured[2], (nlohmann::json{{"epochs", 2}, {"schedule", "auto"}, {"batch_size", 128}}));
}

// Time to target's phase 2 on `space` from `start`, the recipe's LR 0.1: the points its LR
// refinement tried, in order, and the phase's choice.
std::pair<std::vector<nlohmann::json>, nlohmann::json> refine_lr(TrialExecutor& executor, const SearchSpace& space, const nlohmann::json& start) {
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(space, start, executor, options);
  TargetPhaseOptions plan_options;
  plan_options.learning_rate = [](const nlohmann::json& p) { return std::optional<double>(p.value("lr", 0.1)); };
  TargetPhase(plan_options).run(tuner);
  std::vector<nlohmann::json> refined;
  for (const auto& t : tuner.trials())
    if (t.stage == "refine-lr") refined.push_back(t.point);
  return {refined, tuner.best()->point};
}

// On two epochs the target is reached at the recipe's LR (0.1) without label smoothing only, at the
// doubled LR with or without (sooner with), at the halved LR not at all. Four epochs reach it later.
TEST(TimeToTarget, AnLRThatReachesTheTargetIsTriedWithTheOtherConvergenceSettingsAtItsHorizon) {
  class SmoothingExecutor : public TrialExecutor {
   public:
    Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
      Trial t;
      t.point = point;
      t.budget_level = request.budget_level;
      const double lr = point.value("lr", 0.1), smoothing = point["label_smoothing"].get<double>();
      const bool reached = point["epochs"] == 4 || lr == 0.2 || (lr == 0.1 && smoothing == 0);
      t.wall_time_s = point["epochs"] == 4 ? 40 : 30 - 10 * lr - smoothing;
      if (reached) t.time_to_target_s = t.wall_time_s;
      return t;
    }
  } executor;
  SearchSpace space;
  space.set_axis("epochs", {2, 4});
  space.set_axis("label_smoothing", {0.0, 0.1});
  const auto [refined, best] = refine_lr(executor, space, {{"epochs", 4}, {"label_smoothing", 0.0}});
  EXPECT_EQ(refined, (std::vector<nlohmann::json>{{{"epochs", 2}, {"label_smoothing", 0.0}, {"lr", 0.2}},
                                                  {{"epochs", 2}, {"label_smoothing", 0.1}, {"lr", 0.2}},
                                                  {{"epochs", 2}, {"label_smoothing", 0.0}, {"lr", 0.05}}}));
  EXPECT_EQ(best, (nlohmann::json{{"epochs", 2}, {"label_smoothing", 0.1}, {"lr", 0.2}}));
}

TEST(TimeToTarget, WithoutAKnownLearningRateThereIsNoRefinement) {
  TimesExecutor executor({{{1, 1}, 40.0}, {{2, 1}, 30.0}, {{4, 1}, 32.0}, {{1, 2}, 40.0}, {{2, 2}, 31.0}, {{4, 2}, 30.0}});
  TunerOptions options = to_target();
  options.strategy = "grid";
  Tuner tuner(threads_space(), {{"threads", 1}}, executor, options);
  TargetPhase(TargetPhaseOptions{}).run(tuner);
  for (const auto& t : tuner.trials()) EXPECT_NE(t.stage, "refine-lr");
}


// The grid's fastest point, four epochs at the recipe's LR, reaches the target at epoch 2 of 4; its
// doubled LR does too (and with one-cycle), so each is also tried on the two-epoch horizon (an LR
// that misses, halved, is not). One-cycle at epoch 3 of 4 would end on three epochs.
TEST(TimeToTarget, AnLrThatReachedTheTargetBeforeItsHorizonsEndIsAlsoTriedOnTheHorizonEndingThere) {
  auto point = [](int64_t epochs, const char* schedule, std::optional<double> lr) {
    nlohmann::json p = {{"epochs", epochs}, {"schedule", schedule}};
    if (lr) p["lr"] = *lr;
    return p;
  };
  RunsExecutor executor({{point(4, "auto", std::nullopt).dump(), {30.0, 2, 0.001}},
                         {point(2, "auto", std::nullopt).dump(), {31.0, 2, 0.001}},
                         {point(4, "auto", 0.2).dump(), {29.0, 2, 0.004}},
                         {point(4, "onecycle", 0.2).dump(), {40.0, 3, 0.004}},
                         {point(2, "auto", 0.2).dump(), {28.0, 2, 0.006}}});
  SearchSpace space;
  space.set_axis("epochs", {2, 3, 4});
  space.set_axis("schedule", {"auto", "onecycle"});
  const auto [refined, best] = refine_lr(executor, space, point(4, "auto", std::nullopt));
  EXPECT_EQ(refined, (std::vector<nlohmann::json>{point(4, "auto", 0.2), point(4, "onecycle", 0.2), point(2, "auto", 0.2),
                                                  point(3, "onecycle", 0.2), point(4, "auto", 0.05)}));
  EXPECT_EQ(best, point(2, "auto", 0.2));
}

}  // namespace
}  // namespace dyno
