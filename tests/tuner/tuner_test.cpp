#include "dyno/tuner/tuner.h"

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/statistics.h"
#include "dyno/tuner/tune_report.h"
#include "synthetic_executor.h"
#include "noisy_process_executor.h"
#include "table_executor.h"

namespace dyno {
namespace {

std::string temp_journal(const std::string& name) {
  const std::string path = "/tmp/dyno_tuner_test_" + name + "_" + std::to_string(::getpid()) + ".jsonl";
  std::remove(path.c_str());
  return path;
}

nlohmann::json start() {
  return {{"threads", 1}, {"num_workers", 0}, {"batch_size", 64}, {"amp", "off"}, {"set_to_none", false}, {"channels_last", false}};
}

// Peak memory by batch size (MiB), throughput by the synthetic objective.
class MemoryTable : public testing::SyntheticExecutor {
 public:
  std::map<int64_t, int64_t> mebibytes;
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    Trial t = SyntheticExecutor::execute(point, request, name);
    t.peak_memory_bytes = mebibytes.at(point["batch_size"].get<int64_t>()) << 20;
    return t;
  }
};

TEST(Tuner, EquivalentPointsGoToTheSimplerConfig) {
  testing::SyntheticExecutor executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  nlohmann::json fancy = start();
  fancy["channels_last"] = true;  // 10% faster
  tuner.measure(start(), "a");
  tuner.measure(fancy, "a");
  EXPECT_TRUE(tuner.preferred(Verdict::Equivalent, start(), fancy));
  EXPECT_FALSE(tuner.preferred(Verdict::Equivalent, fancy, start()));
  EXPECT_TRUE(tuner.preferred(Verdict::FirstBetter, fancy, start()));  // a better point is preferred, simple or not
  EXPECT_FALSE(tuner.preferred(Verdict::SecondBetter, start(), fancy));
}

TEST(Tuner, EquivalentPointsGoToLessMemoryOnlyWhenTheSavingMattersOnTheDevice) {
  // bf16 b128 and b256 equivalent, 61 MiB apart: on a 24 GiB machine the saving does not matter.
  auto prefers_large = [&](int64_t capacity) {
    MemoryTable executor;
    executor.mebibytes = {{128, 497}, {256, 558}};
    TunerOptions options;
    options.memory_capacity_bytes = capacity;
    Tuner tuner(testing::synthetic_space(), start(), executor, options);
    nlohmann::json small = start(), large = start();
    small["batch_size"] = 128;
    large["batch_size"] = 256;  // the higher estimate (480 against 420)
    tuner.measure(small, "a");
    tuner.measure(large, "a");
    EXPECT_NE(tuner.preferred(Verdict::Equivalent, large, small), tuner.preferred(Verdict::Equivalent, small, large));
    return tuner.preferred(Verdict::Equivalent, large, small);
  };
  EXPECT_TRUE(prefers_large(int64_t{24} << 30));  // 61 MiB of 24 GiB: the higher estimate
  EXPECT_FALSE(prefers_large(int64_t{1} << 30));  // of a 1 GiB limit, 61 MiB matters
  EXPECT_FALSE(prefers_large(0));                  // capacity unknown: any 5% saving counts
}

// Time to target's throughput phase: equivalent points go to the smaller batch (fewer epochs to
// the target) even where the larger one's estimate is higher; a better point still wins.
TEST(Tuner, EquivalentPointsCanGoToTheSmallerBatch) {
  MemoryTable executor;
  executor.mebibytes = {{128, 500}, {256, 510}};  // no material saving either way
  nlohmann::json small = start(), large = start();
  small["batch_size"] = 128;
  large["batch_size"] = 256;
  TunerOptions options;
  Tuner plain(testing::synthetic_space(), start(), executor, options);
  plain.measure(small, "a");
  plain.measure(large, "a");
  EXPECT_TRUE(plain.preferred(Verdict::Equivalent, large, small));
  options.ties_prefer_smaller_batch = true;
  Tuner tuner(testing::synthetic_space(), start(), executor, options);
  tuner.measure(small, "a");
  tuner.measure(large, "a");
  EXPECT_TRUE(tuner.preferred(Verdict::Equivalent, small, large));
  EXPECT_TRUE(tuner.preferred(Verdict::FirstBetter, large, small));
}

// Throughput per batch size and process (budget level): deterministic figures for compare().
testing::TableExecutor by_level(std::map<int64_t, std::map<int64_t, double>> figures) {
  return testing::TableExecutor(std::function<testing::TableExecutor::Interval(const nlohmann::json&, int64_t)>(
      [figures](const nlohmann::json& p, int64_t level) -> testing::TableExecutor::Interval {
        const double v = figures.at(p["batch_size"].get<int64_t>()).at(level);
        return {v * 0.99, v, v * 1.01};
      }));
}

// Without an indifference, compare measures until the cap: a verdict alone does not end it, since
// a verdict at 95% may still be wrong by more than the choice is worth.
TunerOptions until_the_cap() {
  TunerOptions options;
  options.decision.indifference = 0;
  return options;
}

TEST(Tuner, CompareMeasuresTheLessMeasuredPointAgainUntilTheCap) {
  // Batch 128 is 4% faster than 64; one process each cannot tell that from the noise.
  auto executor = by_level({{64, {{1, 100}, {2, 100.5}, {3, 99.5}, {4, 100}}}, {128, {{1, 104}, {2, 103.5}, {3, 104.5}, {4, 104}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, until_the_cap());
  const nlohmann::json small = {{"batch_size", 64}}, large = {{"batch_size", 128}};
  tuner.measure(small, "start");
  tuner.measure(large, "batch");
  EXPECT_EQ(tuner.judge(large, small).verdict, Verdict::Unknown);
  EXPECT_EQ(tuner.compare(large, small, "batch"), Verdict::FirstBetter);
  // Each new process went to the less-measured point (the first named on a tie), four each.
  EXPECT_EQ(executor.levels, (std::vector<int64_t>{1, 1, 2, 2, 3, 3, 4, 4}));
  EXPECT_EQ(tuner.judge(large, small).verdict, Verdict::FirstBetter);
  EXPECT_EQ(tuner.trials().back().stage, "batch");
  // Asked again, both are at the cap: nothing more is measured.
  EXPECT_EQ(tuner.compare(small, large, "batch"), Verdict::SecondBetter);
  EXPECT_EQ(executor.levels.size(), 8u);
}

// The same points with the default indifference: once the processes agree, taking the higher
// estimate could cost under 0.05% in expectation, so compare settles on it before the cap.
TEST(Tuner, CompareStopsOnceAWrongChoiceCouldOnlyCostLittle) {
  auto executor = by_level({{64, {{1, 100}, {2, 100.5}, {3, 99.5}, {4, 100}}}, {128, {{1, 104}, {2, 103.5}, {3, 104.5}, {4, 104}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  const nlohmann::json small = {{"batch_size", 64}}, large = {{"batch_size", 128}};
  tuner.measure(small, "start");
  tuner.measure(large, "batch");
  EXPECT_GT(expected_loss(tuner.judge(large, small)), TunerOptions{}.decision.indifference);  // one process each: not yet
  EXPECT_EQ(tuner.compare(large, small, "batch"), Verdict::FirstBetter);
  const Comparison settled = tuner.judge(large, small);
  EXPECT_EQ(settled.verdict, Verdict::Unknown);  // the interval still crosses zero
  EXPECT_LT(expected_loss(settled), TunerOptions{}.decision.indifference);
  EXPECT_LT(executor.levels.size(), 7u);
}

// Where a difference not known goes to the smaller batch (time to target's first phase), the
// choice stopping now would make is the smaller batch: compare measures until that choice is cheap
// or the larger batch is shown better, not until taking the larger one would be.
TEST(Tuner, CompareStopsOnTheExpectedLossOfTheChoiceItWouldMake) {
  auto executor = by_level({{64, {{1, 100}, {2, 100.5}, {3, 99.5}, {4, 100}}}, {128, {{1, 104}, {2, 103.5}, {3, 104.5}, {4, 104}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  TunerOptions options;
  options.ties_prefer_smaller_batch = true;
  options.decision.indifference = 0.002;
  Tuner tuner(space, {{"batch_size", 64}}, executor, options);
  const nlohmann::json small = {{"batch_size", 64}}, large = {{"batch_size", 128}};
  tuner.measure(small, "start");
  tuner.measure(large, "batch");
  EXPECT_EQ(tuner.compare(large, small, "batch"), Verdict::FirstBetter);
  EXPECT_EQ(tuner.judge(large, small).verdict, Verdict::FirstBetter);
}

TEST(Tuner, AtTheCapNotKnownIsSettledOnTheEstimates) {
  auto executor = by_level({{64, {{1, 100}, {2, 100.5}}}, {128, {{1, 104}, {2, 103.5}}}, {256, {{1, 101}, {2, 100.5}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128, 256});
  TunerOptions options;
  options.decision.max_processes = 2;
  Tuner tuner(space, {{"batch_size", 64}}, executor, options);
  const nlohmann::json b64 = {{"batch_size", 64}}, b128 = {{"batch_size", 128}}, b256 = {{"batch_size", 256}};
  for (const auto& p : {b64, b128, b256}) tuner.measure(p, "a");
  EXPECT_EQ(tuner.compare(b128, b64, "a"), Verdict::FirstBetter);  // 3.7% apart: the higher estimate
  // 0.5% apart on two processes each: within the 2% margin, but not shown equivalent (the
  // interval is wider than the margin), so still the higher estimate.
  EXPECT_EQ(tuner.judge(b256, b64).verdict, Verdict::Unknown);
  EXPECT_EQ(tuner.compare(b256, b64, "a"), Verdict::FirstBetter);
  EXPECT_EQ(executor.levels.size(), 6u);
}

// Time to target's throughput phase: a larger batch must be shown better. A difference not known
// at the cap goes to the smaller batch there, and to the higher estimate elsewhere.
TEST(Tuner, InTheThroughputPhaseOfTimeToTargetALargerBatchMustBeShownBetter) {
  auto executor = by_level({{64, {{1, 100}, {2, 101}}}, {128, {{1, 102}, {2, 103}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  const nlohmann::json b64 = {{"batch_size", 64}}, b128 = {{"batch_size", 128}};
  TunerOptions options;
  options.decision.max_processes = 2;
  for (const bool to_target : {false, true}) {
    options.ties_prefer_smaller_batch = to_target;
    Tuner tuner(space, b64, executor, options);
    tuner.measure(b64, "a");
    tuner.measure(b128, "a");
    EXPECT_EQ(tuner.compare(b128, b64, "a"), to_target ? Verdict::SecondBetter : Verdict::FirstBetter);
    EXPECT_EQ(tuner.judge(b128, b64).verdict, Verdict::Unknown);  // 2% apart on two processes each
    EXPECT_EQ(tuner.preferred(Verdict::Unknown, b128, b64), !to_target);
  }
}

TEST(Tuner, AClearDifferenceIsDecidedOnOneProcessOnceTheNoiseIsKnown) {
  auto executor = by_level({{64, {{1, 100}, {2, 101}, {3, 99}}}, {128, {{1, 50}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  for (int64_t level = 1; level <= 3; ++level) tuner.measure({{"batch_size", 64}}, "start", level);
  tuner.measure({{"batch_size", 128}}, "batch");
  EXPECT_EQ(tuner.compare({{"batch_size", 128}}, {{"batch_size", 64}}, "batch"), Verdict::SecondBetter);
  EXPECT_EQ(executor.levels.size(), 4u);  // half as fast: beyond any likely slow spell, no second process needed
}

TEST(Tuner, EvidenceHasOneFigurePerProcess) {
  auto executor = by_level({{64, {{1, 100}, {2, 200}}}, {128, {{1, 50}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  tuner.measure({{"batch_size", 64}}, "a");
  tuner.measure_again({{"batch_size", 64}}, "a");
  EXPECT_EQ(executor.levels, (std::vector<int64_t>{1, 2}));
  const PointEvidence e = tuner.evidence({{"batch_size", 64}});
  ASSERT_EQ(e.processes(), 2u);
  EXPECT_NEAR(e.figures[0], std::log(100.0), 1e-12);
  EXPECT_NEAR(e.figures[1], std::log(200.0), 1e-12);
  EXPECT_NEAR(e.mean(), std::log(std::sqrt(100.0 * 200.0)), 1e-12);  // a geometric mean
  EXPECT_FALSE(e.failed);
  EXPECT_TRUE(tuner.evidence({{"batch_size", 128}}).figures.empty());  // not measured
}

// A staged search run whole into a journal, the journal's text then edited (as a kill, or an older
// dyno, would leave it), and the search resumed from it.
struct ResumedSearch {
  int64_t ran = 0;            // trials the resumed search ran
  int64_t executed = 0;       // trials it counts, replayed ones included
  int64_t whole_run = 0;      // trials the whole run counted
  bool resumed = false;
  nlohmann::json best, whole_run_best;
  nlohmann::json report;      // the resumed search's tune report
};
// (`max_trials`: the resumed search's trial budget; 0, none, as the whole run's.)
ResumedSearch resume_edited(const std::string& name, const std::function<std::string(const std::string&)>& edit, int64_t max_trials = 0) {
  const std::string journal = temp_journal(name);
  TunerOptions options;
  options.strategy = "staged";
  options.journal_path = journal;
  testing::SyntheticExecutor first;
  Tuner complete(testing::synthetic_space(), start(), first, options);
  complete.run();
  std::ifstream in(journal);
  write_file_atomically(journal, edit(std::string(std::istreambuf_iterator<char>(in), {})));
  options.resume = true;
  options.max_trials = max_trials;
  testing::SyntheticExecutor second;
  Tuner resumed(testing::synthetic_space(), start(), second, options);
  ResumedSearch r;
  r.resumed = resumed.resumed_from_journal();
  resumed.run();
  r.ran = second.executions;
  r.executed = resumed.executed_trials();
  r.whole_run = complete.executed_trials();
  r.best = resumed.best()->point;
  r.whole_run_best = complete.best()->point;
  r.report = tune_report_json(resumed, TuneSummary{});
  std::remove(journal.c_str());
  return r;
}

TEST(Tuner, ResumeFromTheJournalRepeatsNothingAndLosesNothing) {
  // Simulate a kill: drop the last 3 finished trials and leave a torn line behind.
  const ResumedSearch r = resume_edited("resume", [](const std::string& text) {
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::string truncated;
    for (size_t i = 0; i + 3 < lines.size(); ++i) truncated += lines[i] + "\n";
    return truncated + lines.back().substr(0, lines.back().size() / 2);
  });
  EXPECT_TRUE(r.resumed);
  EXPECT_EQ(r.ran, 3);  // exactly the trials that were lost
  EXPECT_EQ(r.executed, r.whole_run);
  EXPECT_EQ(r.best, r.whole_run_best);
}

// A journal of an older dyno wrote an integer knob's values as given (64.0 from a space file): its
// trials are the same points as the axes' 64, and are replayed, not run again.
TEST(Tuner, AResumedSearchReadsAJournalsNumbersAsItsAxesWriteThem) {
  const ResumedSearch r = resume_edited("resume_numbers", [](const std::string& text) {
    // (In the points, and in the keys, whose quotes are escaped.)
    return std::regex_replace(text, std::regex(R"re((\\?"batch_size\\?":)([0-9]+))re"), "$1$2.0");
  });
  EXPECT_EQ(r.ran, 0);
  EXPECT_EQ(r.best, r.whole_run_best);
}

// Under a trial budget, a resumed search counts a journaled trial once its replay comes to it, so
// its comparisons buy the processes the first run bought: it replays every journaled trial (none
// is left out of the evidence while counted against the budget).
TEST(Tuner, AResumedSearchUnderABudgetReplaysTheSamePath) {
  const std::string journal = temp_journal("resume_budget");
  TunerOptions options;
  options.strategy = "staged";
  options.journal_path = journal;
  options.max_trials = 24;
  testing::NoisyProcessExecutor first(7, testing::ProcessNoise{});
  Tuner complete(testing::synthetic_space(), start(), first, options);
  complete.run();
  std::ifstream in(journal);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_GT(lines.size(), 14u);
  std::string kept;
  for (size_t i = 0; i < 13; ++i) kept += lines[i] + "\n";  // the header and 12 trials
  write_file_atomically(journal, kept);

  options.resume = true;
  testing::NoisyProcessExecutor second(8, testing::ProcessNoise{});  // what was not journaled measures anew
  Tuner resumed(testing::synthetic_space(), start(), second, options);
  resumed.run();
  for (size_t i = 0; i < 12; ++i) {  // each journaled trial is evidence again
    const Trial& t = resumed.trials()[i];
    EXPECT_GE(static_cast<int64_t>(resumed.evidence(t.point).processes()), t.budget_level) << t.key;
  }
  EXPECT_EQ(resumed.executed_trials(), 24);
  std::remove(journal.c_str());
}

// A resume given a smaller trial budget stops where a first run given it would: the journaled
// trials past it are not replayed, and the report lists this run's trials only.
TEST(Tuner, AResumeGivenASmallerTrialBudgetStopsWhereAFirstRunWould) {
  const ResumedSearch r = resume_edited("resume_smaller_budget", [](const std::string& text) { return text; }, 8);
  ASSERT_GT(r.whole_run, 8);
  EXPECT_EQ(r.ran, 0);
  EXPECT_EQ(r.executed, 8);
  TunerOptions options;
  options.strategy = "staged";
  options.max_trials = 8;
  testing::SyntheticExecutor executor;
  Tuner small(testing::synthetic_space(), start(), executor, options);
  small.run();
  EXPECT_EQ(r.best, small.best()->point);
  EXPECT_EQ(r.report["trials"].size(), 8u);
  EXPECT_EQ(r.report["outcomes"], (nlohmann::json{{"ok", 8}}));
}

TEST(Tuner, ParetoFrontKeepsOnlyUndominatedTrials) {
  testing::SyntheticExecutor executor;
  SearchSpace space;
  space.set_axis("batch_size", {64, 128, 256, 512});
  TunerOptions options;
  options.strategy = "grid";
  Tuner tuner(space, {{"batch_size", 64}}, executor, options);
  tuner.run();
  // Memory grows with the batch; throughput too up to 256, then falls: 512 is dominated by 256.
  std::vector<int64_t> batches;
  for (const auto& [point, bytes] : tuner.pareto_front()) batches.push_back(point["batch_size"]);
  EXPECT_EQ(batches, (std::vector<int64_t>{64, 128, 256}));
}

// Each process of a configuration runs at its own throughput and needs its own memory.
class ProcessTable : public TrialExecutor {
 public:
  std::map<std::pair<int64_t, int64_t>, std::pair<double, int64_t>> by_batch_and_level;  // -> (samples/s, bytes)
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.wall_time_s = 1;
    std::tie(t.samples_per_second, t.peak_memory_bytes) = by_batch_and_level.at({point["batch_size"], request.budget_level});
    t.ci_low = t.samples_per_second * 0.99;
    t.ci_high = t.samples_per_second * 1.01;
    return t;
  }
};

TEST(Tuner, ParetoFrontListsEachConfigurationOnceAtItsEstimateAndTheMostMemoryItNeeded) {
  ProcessTable executor;
  // Batch 64's second process needed more memory than any of batch 128's, which is faster.
  executor.by_batch_and_level = {{{64, 1}, {100, 1000}}, {{64, 2}, {110, 3000}}, {{128, 1}, {150, 2000}}, {{128, 2}, {160, 2000}},
                                 {{32, 1}, {60, 500}}, {{32, 2}, {64, 800}}, {{32, 3}, {60, 9000}}};
  SearchSpace space;
  space.set_axis("batch_size", {32, 64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  for (int64_t batch : {32, 64, 128})
    for (int64_t level : {1, 2}) tuner.measure({{"batch_size", batch}}, "test", level);
  tuner.measure({{"batch_size", 32}}, "guard-reference", 3);  // the guard's run: not the configuration's memory
  std::vector<std::pair<int64_t, int64_t>> front;
  for (const auto& [point, bytes] : tuner.pareto_front()) front.emplace_back(point["batch_size"], bytes);
  EXPECT_EQ(front, (std::vector<std::pair<int64_t, int64_t>>{{32, 800}, {128, 2000}}));
}

}  // namespace
}  // namespace dyno

namespace dyno {
namespace {

// Adds a falling loss trajectory to the synthetic trials, so that the convergence guard runs.
class TrajectoryExecutor : public testing::SyntheticExecutor {
 public:
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    Trial t = SyntheticExecutor::execute(point, request, name);
    t.losses = {2.3, 1.0, 0.6, 0.5};
    t.report_path = name;  // the folder the trial ran in
    names.push_back(name);
    requests.push_back(request);
    return t;
  }
  std::vector<std::string> names;
  std::vector<TrialRequest> requests;
};

TEST(Tuner, GuardReusesAMeasuredFp32TrialOnTheSameTrajectory) {
  TrajectoryExecutor executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  tuner.measure({{"threads", 1}, {"num_workers", 0}, {"batch_size", 64}, {"amp", "off"}, {"set_to_none", false}, {"channels_last", false}}, "a");
  // bf16 at another thread count: its fp32 reference differs only in a neutral knob -> reused.
  tuner.measure({{"threads", 2}, {"num_workers", 0}, {"batch_size", 64}, {"amp", "bf16"}, {"set_to_none", false}, {"channels_last", false}}, "b");
  EXPECT_EQ(executor.executions, 2);
  // bf16 at another batch size: a different trajectory, so its reference is measured.
  tuner.measure({{"threads", 2}, {"num_workers", 0}, {"batch_size", 128}, {"amp", "bf16"}, {"set_to_none", false}, {"channels_last", false}}, "c");
  EXPECT_EQ(executor.executions, 4);
  EXPECT_EQ(tuner.trials()[2].stage, "guard-reference");
  // The candidate ran first; its reference ran while it waited, in a folder of its own.
  EXPECT_EQ(executor.names, (std::vector<std::string>{"trial-1", "trial-2", "trial-3", "trial-4"}));
  EXPECT_EQ(tuner.trials()[2].id, 4);
  EXPECT_EQ(tuner.trials()[2].report_path, "trial-4");
  EXPECT_EQ(tuner.trials()[3].id, 3);
  EXPECT_EQ(tuner.trials()[3].report_path, "trial-3");
  // The guard compares over the windows both trajectories have: the reference runs over the first
  // of its candidate's windows only (here all four); the candidates run their whole measurement.
  EXPECT_EQ(executor.requests[3].loss_windows, 4);
  EXPECT_EQ(executor.requests[2].loss_windows, 0);
}

// The final race among three points: every point left is measured once more a round, a point
// the leader is better than drops out, and when the rounds run out the leader wins: estimates
// within the margin are not shown equivalent, and do not hand the win to the simpler point.
TEST(Tuner, TheFinalRaceDropsWhatTheLeaderBeatsAndKeepsTheLeaderOfPointsNotKnownApart) {
  auto executor = by_level({{64, {{1, 118}, {2, 118}, {3, 118}, {4, 118}}},
                            {128, {{1, 120}, {2, 120}, {3, 120}, {4, 120}}},
                            {256, {{1, 90}, {2, 90}, {3, 90}, {4, 90}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128, 256});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  const nlohmann::json b64 = {{"batch_size", 64}}, b128 = {{"batch_size", 128}}, b256 = {{"batch_size", 256}};
  for (const auto& p : {b64, b128, b256}) tuner.measure(p, "a");
  EXPECT_EQ(tuner.leading_points(3), (std::vector<nlohmann::json>{b128, b64, b256}));
  tuner.final_race(tuner.leading_points(3), 3);
  EXPECT_EQ(tuner.evidence(b256).processes(), 2u);  // dropped after the first round
  EXPECT_EQ(tuner.evidence(b128).processes(), 4u);  // 1.7% apart: not known in three rounds
  EXPECT_EQ(tuner.evidence(b64).processes(), 4u);
  EXPECT_EQ(tuner.judge(b64, b128).verdict, Verdict::Unknown);
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point, b128);
  EXPECT_EQ(tuner.best()->budget_level, 4);
  EXPECT_EQ(tuner.trials().back().stage, "race");
}

// Points the evidence shows equivalent (the whole interval within the margin): the simpler wins,
// though its estimate is a little lower. Known within the race's resolution sooner (here after
// four processes each, as a climb leaves them), the two are raced on while the tie-breaks would
// prefer the trailing one and the rounds left could show them equivalent.
TEST(Tuner, TheFinalRacePrefersTheSimplerOfPointsShownEquivalent) {
  std::map<int64_t, double> b64, b128;
  for (int64_t level = 1; level <= 30; ++level) {
    b64[level] = 119.5;
    b128[level] = 120;
  }
  auto executor = by_level({{64, b64}, {128, b128}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  for (int64_t level = 1; level <= 4; ++level)
    for (int64_t batch : {64, 128}) tuner.measure({{"batch_size", batch}}, "a", level);
  tuner.final_race(tuner.leading_points(3), 24);
  EXPECT_EQ(tuner.judge({{"batch_size", 64}}, {{"batch_size", 128}}).verdict, Verdict::Equivalent);
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point["batch_size"], 64);
}

TEST(Tuner, TheFinalRaceEndsOnceTheLeaderIsDecidedAgainstEveryPointLeft) {
  auto executor = by_level({{64, {{1, 100}, {2, 100}}}, {128, {{1, 130}, {2, 130}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  Tuner tuner(space, {{"batch_size", 64}}, executor, TunerOptions{});
  tuner.measure({{"batch_size", 64}}, "a");
  tuner.measure({{"batch_size", 128}}, "a");
  tuner.final_race(tuner.leading_points(3), 3);
  EXPECT_EQ(executor.levels.size(), 4u);  // one round: 26% apart on two processes each is decided
  EXPECT_EQ(tuner.best()->point["batch_size"], 128);
}

// Two points that are the same, measured 6% high and low by turns: no number of rounds shows
// either better or the two equivalent within 2%, but once each is known within 4% of the leader
// the race stops paying to tell them apart; without that resolution it runs every round.
TEST(Tuner, TheFinalRaceEndsOnceEveryPointLeftIsKnownWithinItsResolution) {
  std::map<int64_t, double> b64, b128;
  for (int64_t level = 1; level <= 30; ++level) {
    b64[level] = level % 2 ? 106 : 94;
    b128[level] = level % 2 ? 94 : 106;
  }
  for (const double resolution : {0.04, 0.0}) {
    auto executor = by_level({{64, b64}, {128, b128}});
    SearchSpace space;
    space.set_axis("batch_size", {64, 128});
    TunerOptions options;
    options.decision.resolution = resolution;
    Tuner tuner(space, {{"batch_size", 64}}, executor, options);
    tuner.measure({{"batch_size", 64}}, "a");
    tuner.measure({{"batch_size", 128}}, "a");
    tuner.final_race(tuner.leading_points(3), 24);
    const Comparison c = tuner.judge({{"batch_size", 64}}, {{"batch_size", 128}});
    EXPECT_EQ(c.verdict, Verdict::Unknown);
    if (resolution > 0) {
      EXPECT_LE(c.high - c.low, 2 * resolution);
      EXPECT_LT(executor.levels.size(), 2u + 2 * 24);
    } else {
      EXPECT_EQ(executor.levels.size(), 2u + 2 * 24);
    }
  }
}

// After its first round, a race runs a round only while the budget covers it; the rounds run
// choose the winner.
TEST(Tuner, TheFinalRaceStopsBeforeARoundTheBudgetWouldCut) {
  auto executor = by_level({{64, {{1, 100}, {2, 103}, {3, 97}}}, {128, {{1, 104}, {2, 101}, {3, 106}}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128});
  TunerOptions options;
  options.max_trials = 5;
  Tuner tuner(space, {{"batch_size", 64}}, executor, options);
  tuner.measure({{"batch_size", 64}}, "a");
  tuner.measure({{"batch_size", 128}}, "a");
  EXPECT_NO_THROW(tuner.final_race(tuner.leading_points(3), 8));
  EXPECT_EQ(executor.levels.size(), 4u);  // the first round; the second would need two more
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point["batch_size"], 128);
  EXPECT_EQ(tuner.best()->stage, "race");
}

// A point first measured as a guard's reference, then asked for by the search, is the search's
// measurement: a candidate that can be ranked and chosen.
TEST(Tuner, AReferenceTheSearchThenAsksForIsACandidate) {
  TrajectoryExecutor executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  nlohmann::json bf16 = start(), fp32 = start();
  bf16["amp"] = "bf16";
  bf16["batch_size"] = fp32["batch_size"] = 128;
  tuner.measure(bf16, "a");
  ASSERT_EQ(tuner.trials()[0].stage, "guard-reference");  // recorded before the candidate it judged
  const Trial again = tuner.measure(fp32, "b");
  EXPECT_EQ(executor.executions, 2);  // not run twice
  EXPECT_EQ(again.stage, "b");
  EXPECT_EQ(tuner.trials()[0].stage, "b");
  bool ranked = false;
  for (const auto& p : tuner.leading_points(10)) ranked = ranked || p == fp32;
  EXPECT_TRUE(ranked);
}

// With one trial left, a candidate whose reference would need another is judged on its own loss.
TEST(Tuner, AReferenceNeverRunsPastTheTrialBudget) {
  TrajectoryExecutor executor;
  TunerOptions options;
  options.max_trials = 1;
  Tuner tuner(testing::synthetic_space(), start(), executor, options);
  nlohmann::json bf16 = start();
  bf16["amp"] = "bf16";
  bf16["batch_size"] = 128;
  EXPECT_TRUE(tuner.measure(bf16, "a").ok());
  EXPECT_EQ(executor.executions, 1);
  EXPECT_EQ(tuner.executed_trials(), 1);
}

// A resumed search replays a guard's reference with the candidate it was measured for: it counts
// against the budget and is evidence from there, as in the first run. A candidate killed while its
// reference ran (the reference journaled, the candidate not) runs again with its reference, under
// new ids, in folders of their own; every later resume replays the pair.
TEST(Tuner, AResumedSearchReplaysAGuardReferenceWithItsCandidate) {
  const std::string journal = temp_journal("resume_reference");
  TunerOptions options;
  options.journal_path = journal;
  nlohmann::json bf16 = start(), fp32 = start();
  bf16["amp"] = "bf16";
  bf16["batch_size"] = fp32["batch_size"] = 128;
  {
    TrajectoryExecutor first;
    Tuner tuner(testing::synthetic_space(), start(), first, options);
    tuner.measure(bf16, "a");
    ASSERT_EQ(tuner.executed_trials(), 2);
  }
  options.resume = true;
  {
    TrajectoryExecutor second;
    Tuner resumed(testing::synthetic_space(), start(), second, options);
    resumed.measure(bf16, "a");
    EXPECT_EQ(second.executions, 0);
    EXPECT_EQ(resumed.executed_trials(), 2);
    EXPECT_EQ(resumed.evidence(fp32).processes(), 1u);
  }
  // The kill came after the reference's line: the candidate runs again, as trial 3, not as 2.
  std::ifstream in(journal);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 2u);  // the reference (id 2), then the candidate (id 1)
  write_file_atomically(journal, lines[0] + "\n");
  {
    TrajectoryExecutor third;
    Tuner resumed(testing::synthetic_space(), start(), third, options);
    EXPECT_EQ(resumed.measure(bf16, "a").id, 3);
    EXPECT_EQ(third.names, (std::vector<std::string>{"trial-3", "trial-4"}));
    EXPECT_EQ(resumed.executed_trials(), 2);
  }
  options.max_trials = 2;
  TrajectoryExecutor fourth;
  Tuner resumed(testing::synthetic_space(), start(), fourth, options);
  EXPECT_EQ(resumed.measure(bf16, "a").id, 3);
  EXPECT_EQ(fourth.executions, 0);
  EXPECT_EQ(resumed.executed_trials(), 2);  // the reference is charged: the budget is spent
  EXPECT_EQ(resumed.evidence(fp32).processes(), 1u);
  EXPECT_THROW(resumed.measure(start(), "b"), BudgetExhausted);
  std::remove(journal.c_str());
}

// A resumed run that verifies another point under a label a journaled verification used runs it in
// a folder of its own (the label and its id), not over the journaled one's report.
TEST(Tuner, AResumedVerificationOfAnotherPointRunsInAFolderOfItsOwn) {
  const std::string journal = temp_journal("resume_verify");
  TunerOptions options;
  options.journal_path = journal;
  nlohmann::json other = start();
  other["batch_size"] = 128;
  {
    TrajectoryExecutor first;
    Tuner tuner(testing::synthetic_space(), start(), first, options);
    tuner.verify(first, start(), "best");
    EXPECT_EQ(first.names, (std::vector<std::string>{"verify-best"}));
  }
  options.resume = true;
  TrajectoryExecutor second;
  Tuner resumed(testing::synthetic_space(), start(), second, options);
  resumed.verify(second, start(), "best");  // journaled: not run again
  resumed.verify(second, other, "best");
  EXPECT_EQ(second.names, (std::vector<std::string>{"verify-best-2"}));
  std::remove(journal.c_str());
}

TEST(Tuner, GuardComparesAPointWithItsReferenceOnceNotAtEveryBudgetLevel) {
  TrajectoryExecutor executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  const nlohmann::json bf16 = {{"threads", 2}, {"num_workers", 0}, {"batch_size", 128}, {"amp", "bf16"}, {"set_to_none", false}, {"channels_last", false}};
  tuner.measure(bf16, "a");
  EXPECT_EQ(executor.executions, 2);  // the point and its fp32 reference
  tuner.measure(bf16, "confirm", 2);
  EXPECT_EQ(executor.executions, 3);  // passed at level 1: no level-2 reference
  EXPECT_TRUE(tuner.trials().back().ok());
}

// Records what each execution was asked for, and gives it windows: a level-1 unit of 8 windows
// within +-0.4% of the synthetic value, each process 0.01% faster than the one before.
class RequestRecorder : public testing::SyntheticExecutor {
 public:
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    Trial t = SyntheticExecutor::execute(point, request, name);
    requests.push_back(request);
    for (int64_t u = 0; u < request.units; ++u)
      for (int i = 0; i < 8; ++i) t.windows.push_back(t.samples_per_second * (0.996 + 0.001 * i) * (1 + 1e-4 * static_cast<double>(requests.size())));
    set_throughput_from_windows(t);  // as the process executor does
    return t;
  }
  std::vector<TrialRequest> requests;
};

TEST(Tuner, AHigherThroughputLevelRunsTheMissingUnitsInANewProcessWhoseFiguresItHolds) {
  RequestRecorder executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  const Trial first = tuner.measure(start(), "a");
  const Trial second = tuner.measure(start(), "confirm", 2);
  ASSERT_EQ(executor.requests.size(), 2u);
  EXPECT_EQ(executor.requests[1].budget_level, 2);
  EXPECT_EQ(executor.requests[1].units, 1);  // one more unit: level 1 is already measured
  ASSERT_EQ(second.windows.size(), 8u);  // its own process's windows only
  EXPECT_GT(second.windows.front(), first.windows.front());  // the second process's windows are faster
  EXPECT_DOUBLE_EQ(second.samples_per_second, median(second.windows));
  EXPECT_EQ(tuner.evidence(start()).processes(), 2u);  // the point's figure over both: its estimate
  // Level 4 continues level 2: two more units.
  tuner.measure(start(), "longer", 4);
  EXPECT_EQ(executor.requests[2].units, 2);
  EXPECT_EQ(tuner.trials().back().windows.size(), 16u);
  // A level-2 point with no level 1 runs both units itself.
  nlohmann::json other = start();
  other["threads"] = 2;
  tuner.measure(other, "fresh", 2);
  EXPECT_EQ(executor.requests[3].units, 2);
}

TEST(Tuner, ARaceStopsBelowABarThatAllowsForASlowProcessForThroughputOnly) {
  RequestRecorder executor;
  Tuner tuner(testing::synthetic_space(), start(), executor, TunerOptions{});
  const Trial incumbent = tuner.measure(start(), "a");
  nlohmann::json slower = start();
  slower["num_workers"] = 3;
  slower["threads"] = 1;
  tuner.measure(slower, "b", 1, &incumbent);
  // The bar allows for a slow process: below the incumbent's own interval, by the noise between
  // processes (here the prior's, 5%, on one degree of freedom: t = 12.7).
  const double bar = executor.requests.back().stop_below;
  EXPECT_GT(bar, 0);
  EXPECT_LT(bar, 0.5 * incumbent.ci_low);
  EXPECT_EQ(executor.requests.back().race_id, incumbent.id);
  tuner.measure(start(), "c", 2);
  EXPECT_EQ(executor.requests.back().stop_below, 0);  // no race asked for

  TunerOptions to_target;
  to_target.objective = "time-to-target";
  Tuner ttt(testing::synthetic_space(), start(), executor, to_target);
  const Trial& base = ttt.measure(start(), "a");
  ttt.measure(slower, "b", 1, &base);
  EXPECT_EQ(executor.requests.back().stop_below, 0);  // time-to-target trials are not raced
  ttt.measure(start(), "seed", 2);
  EXPECT_EQ(executor.requests.back().units, 2);  // a seed is a whole run, not the units left
}

// Time to target over seeds (budget level L = seed L): a point misses the target on the seeds
// `misses` names, by its thread count (two threads is the fastest, then four, then one).
class SeedExecutor : public testing::SyntheticExecutor {
 public:
  explicit SeedExecutor(std::function<bool(int64_t threads, int64_t seed)> misses) : misses_(std::move(misses)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override {
    Trial t = SyntheticExecutor::execute(point, request, name);
    const auto threads = point.value("threads", int64_t{1});
    levels.emplace_back(threads, request.budget_level);
    if (misses_(threads, request.budget_level)) {
      t.outcome = Outcome::Rejected;
      t.reason = "did not reach the target";
      return t;
    }
    t.time_to_target_s = 1000.0 / t.samples_per_second;
    return t;
  }
  std::vector<std::pair<int64_t, int64_t>> levels;  // (threads, level) of each execution

 private:
  std::function<bool(int64_t, int64_t)> misses_;
};

// A time-to-target tuner with the first seed of the start point at each thread count measured.
std::unique_ptr<Tuner> seeds_tuner(SeedExecutor& executor, std::initializer_list<int64_t> thread_counts) {
  TunerOptions to_target;
  to_target.objective = "time-to-target";
  auto tuner = std::make_unique<Tuner>(testing::synthetic_space(), start(), executor, to_target);
  for (int64_t threads : thread_counts) {
    nlohmann::json p = start();
    p["threads"] = threads;
    tuner->measure(p, "grid");
  }
  return tuner;
}

// Time to target's race: each round trains every point left on its next seed (level); a point
// that misses the target on one seed is out, and every other point trains on every seed, however
// clearly the leader leads: the verification trains the winner on the same seeds.
TEST(Tuner, TheRaceOnMoreSeedsDropsAPointThatMissesOne) {
  SeedExecutor executor([](int64_t threads, int64_t seed) { return threads == 2 && seed == 2; });
  auto owned = seeds_tuner(executor, {1, 2, 4});
  Tuner& tuner = *owned;
  tuner.final_race(tuner.leading_points(3), 2);
  // Round one: seed 2 for two, four and one thread(s); two threads misses it. Round two, starting
  // one point further along: seed 3 for one and four threads, though four threads is clearly the
  // faster (450 against 300 samples/s).
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 1}, {2, 1}, {4, 1}, {2, 2}, {4, 2}, {1, 2}, {1, 3}, {4, 3}};
  EXPECT_EQ(executor.levels, expected);
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point["threads"], 4);
  EXPECT_EQ(tuner.best()->budget_level, 3);
}

// The race's rounds are interleaved: each starts one point further along than the one before,
// so over as many rounds as points, each point runs first once.
TEST(Tuner, EachRoundOfTheRaceStartsOnePointFurtherAlong) {
  SeedExecutor executor([](int64_t, int64_t) { return false; });
  auto owned = seeds_tuner(executor, {1, 2, 4});
  Tuner& tuner = *owned;
  tuner.final_race(tuner.leading_points(3), 4);
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 1}, {2, 1}, {4, 1},                  // the grid
                                                             {2, 2}, {4, 2}, {1, 2}, {4, 3}, {1, 3},  // the race
                                                             {2, 3}, {1, 4}, {2, 4}, {4, 4}, {2, 5}, {4, 5}, {1, 5}};
  EXPECT_EQ(executor.levels, expected);
}

TEST(Tuner, APointThatMissedASeedNeverWins) {
  auto misses_seed_3 = [](int64_t threads, int64_t seed) { return threads != 1 && seed == 3; };
  SeedExecutor executor(misses_seed_3);
  auto owned = seeds_tuner(executor, {1, 2, 4});
  Tuner& tuner = *owned;
  tuner.final_race(tuner.leading_points(3), 2);
  // Two and four threads miss seed 3: one thread, the slowest, is the only point to reach the
  // target on every seed.
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 1}, {2, 1}, {4, 1}, {2, 2}, {4, 2}, {1, 2}, {4, 3}, {1, 3}, {2, 3}};
  EXPECT_EQ(executor.levels, expected);
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point["threads"], 1);

  SeedExecutor again(misses_seed_3);
  auto two = seeds_tuner(again, {2, 4});
  two->final_race(two->leading_points(3), 2);
  EXPECT_EQ(two->best(), nullptr);
}

// Time to target per seed, by batch size: seconds[batch][seed - 1].
class SeedTimes : public TrialExecutor {
 public:
  explicit SeedTimes(std::map<int64_t, std::vector<double>> seconds) : seconds_(std::move(seconds)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string&) override {
    Trial t;
    t.point = point;
    t.budget_level = request.budget_level;
    t.time_to_target_s = seconds_.at(point["batch_size"].get<int64_t>()).at(static_cast<size_t>(request.budget_level - 1));
    t.wall_time_s = *t.time_to_target_s;
    t.samples_per_second = 1000;
    return t;
  }

 private:
  std::map<int64_t, std::vector<double>> seconds_;
};

// A seed that reaches the target one evaluation later than another is the point's own cost (the
// verification's total time pays it), not a slow spell of the machine's: over seeds the estimate
// is the plain mean of the figures, and the steady point wins the race against the one that was
// fastest on the first seed only.
TEST(Tuner, TimeToTargetsEstimateTakesEverySeedAtItsWord) {
  SeedTimes executor({{256, {29.2, 43.3, 43.3}}, {64, {34.0, 34.1, 34.3}}, {128, {31.0, 44.0, 45.0}}});
  SearchSpace space;
  space.set_axis("batch_size", {64, 128, 256});
  TunerOptions to_target;
  to_target.objective = "time-to-target";
  Tuner tuner(space, {{"batch_size", 64}}, executor, to_target);
  const nlohmann::json b64 = {{"batch_size", 64}}, b128 = {{"batch_size", 128}}, b256 = {{"batch_size", 256}};
  for (const auto& p : {b64, b128, b256}) tuner.measure(p, "grid");
  tuner.final_race(tuner.leading_points(3), 2);
  EXPECT_EQ(tuner.noise().slow_chance(), 0.0);
  EXPECT_NEAR(1.0 / tuner.estimated_objective(b256), std::cbrt(29.2 * 43.3 * 43.3), 1e-9);
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point, b64);
}

// Staged races every candidate against its best so far (each trial request carries the bar it
// stops under, specified by ARaceStopsBelowABarThatAllowsForASlowProcessForThroughputOnly),
// and the optimum is still found.
TEST(Tuner, StagedRacesItsCandidatesAndStillFindsTheOptimum) {
  RequestRecorder executor;
  TunerOptions options;
  options.strategy = "staged";
  Tuner tuner(testing::synthetic_space(), start(), executor, options);
  tuner.run();
  EXPECT_EQ(tuner.best()->point, testing::synthetic_optimum());
  int64_t raced = 0;
  for (const auto& r : executor.requests) raced += r.stop_below > 0;
  EXPECT_GT(raced, 10);
}

// What a reader checks a journal's decisions against (docs/tuner.md): the decision rule's
// constants and the memory the tie-break weighs a difference of peak memory against.
TEST(Tuner, TheJournalHeaderRecordsWhatItsDecisionsWeighed) {
  TunerOptions options;
  options.memory_capacity_bytes = int64_t{16} << 30;
  options.decision.resolution = 0.05;
  const nlohmann::json header = journal_header(options, SearchSpace(), start());
  EXPECT_EQ(header.at("memory_capacity_bytes"), int64_t{16} << 30);
  const nlohmann::json& rule = header.at("decision_rule");
  EXPECT_EQ(rule.at("resolution"), 0.05);
  EXPECT_EQ(rule.at("margin"), DecisionRule{}.margin);
  EXPECT_EQ(rule.at("confidence"), DecisionRule{}.confidence);
  EXPECT_EQ(rule.at("max_processes"), DecisionRule{}.max_processes);
  EXPECT_EQ(rule.at("indifference"), DecisionRule{}.indifference);
}

}  // namespace
}  // namespace dyno
