// Trials as real `dyno train` child processes: every way a trial can fail becomes a recorded
// outcome and the tuning run completes.
#include "dyno/trials/process_trial_executor.h"

#include <signal.h>

#include <cstdlib>

#include <gtest/gtest.h>

#include "dyno/reports/run_report.h"
#include "temp_dir.h"
#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

ProcessTrialOptions tiny_trials(const std::string& dir) {
  ProcessTrialOptions o;
  o.dyno_binary = DYNO_BINARY;
  o.trial_dir = dir;
  o.base.workload = "fashion-mlp";
  o.base.size = "tiny";
  o.base.threads = 1;
  o.base.warmup_steps = 1;
  o.base.log_every_steps = 1;
  o.base.epochs = 3;
  o.measure_steps = 12;
  o.time_cap_s = 20;
  o.timeout_s = 15;
  return o;
}

TEST(ProcessTrialExecutor, EveryFailureIsARecordedOutcomeAndTheRunCompletes) {
  const testing::TempDir scratch("trials_faults");
  const std::string dir = scratch.str();
  auto options = tiny_trials(dir);
  options.base.inject_fault_at_step = 3;
  ProcessTrialExecutor executor(options);
  SearchSpace space;
  space.set_axis("inject_fault", {"none", "crash", "abort", "hang", "nan"});
  TunerOptions tuner_options;
  tuner_options.strategy = "grid";
  Tuner tuner(space, {{"inject_fault", "none"}}, executor, tuner_options);
  tuner.run();
  std::map<std::string, std::string> outcome;
  for (const auto& t : tuner.trials()) outcome[t.point["inject_fault"]] = to_string(t.outcome);
  EXPECT_EQ(outcome["none"], "ok");
  EXPECT_EQ(outcome["crash"], "crashed");
  EXPECT_EQ(outcome["abort"], "aborted");
  EXPECT_EQ(outcome["hang"], "timeout");
  EXPECT_EQ(outcome["nan"], "diverged");
  ASSERT_NE(tuner.best(), nullptr);
  EXPECT_EQ(tuner.best()->point["inject_fault"], "none");
  for (const auto& t : tuner.trials())
    if (!t.ok()) {
      EXPECT_FALSE(t.reason.empty()) << t.outcome;
    }
  // The hung child was killed with its process group: nothing is left running.
  // ("[t]rain" keeps pgrep from matching the shell that runs it.)
  EXPECT_NE(std::system(("pgrep -f '[t]rain --config " + dir + "' > /dev/null").c_str()), 0);
}

TEST(ProcessTrialExecutor, MeasuresThroughputWithAnInterval) {
  const testing::TempDir scratch("trials_measure");
  ProcessTrialExecutor executor(tiny_trials(scratch.str()));
  Trial t = executor.execute({{"batch_size", 32}}, {}, "one");
  ASSERT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_GT(t.samples_per_second, 0);
  EXPECT_LE(t.ci_low, t.samples_per_second);
  EXPECT_GE(t.ci_high, t.samples_per_second);
  EXPECT_GE(t.losses.size(), 6u);
  EXPECT_GT(t.peak_memory_bytes, 0);
}

// A tune run inside a distributed job (a scheduler that sets WORLD_SIZE and the store for every
// process of the job): its trials are one process each, not ranks waiting on that store.
TEST(ProcessTrialExecutor, ATrialIsNotARankOfAJobTheTuneRunsIn) {
  const testing::TempDir scratch("trials_job");
  struct JobEnvironment {
    JobEnvironment() {
      ::setenv("WORLD_SIZE", "2", 1);
      ::setenv("RANK", "1", 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", "9", 1);
    }
    ~JobEnvironment() {
      for (const char* name : {"WORLD_SIZE", "RANK", "MASTER_ADDR", "MASTER_PORT"}) ::unsetenv(name);
    }
  } job;
  auto options = tiny_trials(scratch.str());
  options.timeout_s = 30;
  ProcessTrialExecutor executor(options);
  const Trial t = executor.execute({{"batch_size", 32}}, {}, "one");
  ASSERT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_EQ(std::getenv("WORLD_SIZE"), std::string("2"));  // the tune's own environment is kept
}

// A throughput trial's windows are sized for an interval: about 16 per trial, never longer than
// the configured cadence, at least one step; trials trained to the target keep the cadence.
TEST(ProcessTrialExecutor, ThroughputTrialsGetEnoughWindows) {
  const testing::TempDir scratch("trials_windows");
  auto options = tiny_trials(scratch.str());
  options.base.log_every_steps = 50;
  options.measure_steps = 40;
  ProcessTrialExecutor executor(options);
  EXPECT_EQ(executor.trial_config(nlohmann::json::object(), {}).log_every_steps, 2);  // 40 steps -> 20 windows
  // Four units (a level-4 trial): four times the steps, in windows of the same length (a point's processes alike).
  const RunConfig four = executor.trial_config(nlohmann::json::object(), {4, 4, 0});
  EXPECT_EQ(four.log_every_steps, 2);
  EXPECT_EQ(four.max_steps, four.warmup_steps + 160);
  // Level 4 continuing a measured level 1: three units.
  EXPECT_EQ(executor.trial_config(nlohmann::json::object(), {4, 3, 0}).max_steps, four.warmup_steps + 120);
  // A guard reference needs only its candidate's loss windows (7 windows of 2 steps), but at least
  // one throughput window past the warm-up; the learning-rate schedule is the same (epochs).
  const RunConfig reference = executor.trial_config(nlohmann::json::object(), {1, 1, 0, 7});
  EXPECT_EQ(reference.max_steps, 14);
  EXPECT_EQ(reference.epochs, executor.trial_config(nlohmann::json::object(), {}).epochs);
  EXPECT_EQ(executor.trial_config(nlohmann::json::object(), {1, 1, 0, 1}).max_steps, reference.warmup_steps + 2);
  options.measure_steps = 8;
  EXPECT_EQ(ProcessTrialExecutor(options).trial_config(nlohmann::json::object(), {}).log_every_steps, 1);
  options.measure_steps = 400;
  EXPECT_EQ(ProcessTrialExecutor(options).trial_config(nlohmann::json::object(), {}).log_every_steps, 10);  // capped at 10
  options.to_target = true;
  EXPECT_EQ(ProcessTrialExecutor(options).trial_config(nlohmann::json::object(), {}).log_every_steps, 50);
}

// A run to the target records the evaluation that reached it: the steps and epochs to it and how
// far the metric passed the target there.
TEST(ProcessTrialExecutor, ARunToTheTargetRecordsTheStepsAndTheMarginOfTheEvaluationThatReachedIt) {
  const testing::TempDir scratch("trials_target");
  auto options = tiny_trials(scratch.str());
  options.to_target = true;
  options.base.target = 0.3;
  options.base.eval_every_steps = 4;
  ProcessTrialExecutor executor(options);
  const Trial t = executor.execute(nlohmann::json::object(), {}, "to-target");
  ASSERT_EQ(t.outcome, Outcome::Ok) << t.reason;
  const RunReport report = read_report(t.report_path);
  ASSERT_FALSE(report.metric_curve.empty());
  const CurvePoint& reached = report.metric_curve.back();  // the run stopped there
  EXPECT_EQ(t.steps_to_target, reached.step);
  EXPECT_EQ(t.steps_to_target % 4, 0);
  EXPECT_DOUBLE_EQ(t.epochs_to_target, reached.epoch);
  EXPECT_GT(t.epochs_to_target, 0);
  EXPECT_DOUBLE_EQ(t.target_margin, reached.value - 0.3);
  EXPECT_GE(t.target_margin, 0);
  for (size_t i = 0; i + 1 < report.metric_curve.size(); ++i) EXPECT_LT(report.metric_curve[i].value, 0.3);
}

TEST(ProcessTrialExecutor, MemoryLimitAndInvalidConfigsAreRecorded) {
  const testing::TempDir scratch("trials_limits");
  auto options = tiny_trials(scratch.str());
  options.memory_limit_bytes = 1000;  // far below any real process
  ProcessTrialExecutor executor(options);
  Trial over = executor.execute({{"batch_size", 32}}, {}, "over");
  EXPECT_EQ(over.outcome, Outcome::Oom);  // out of memory under the limit the tuner was given
  EXPECT_NE(over.reason.find("above the limit"), std::string::npos) << over.reason;
  Trial invalid = executor.execute({{"amp", "fp16"}}, {}, "fp16-on-cpu");
  EXPECT_EQ(invalid.outcome, Outcome::InvalidConfig);
  EXPECT_NE(invalid.reason.find("needs device=cuda"), std::string::npos) << invalid.reason;
}

TEST(ProcessTrialExecutor, TheGuardRejectsADivergingConfig) {
  const testing::TempDir scratch("trials_guard");
  ProcessTrialExecutor executor(tiny_trials(scratch.str()));
  SearchSpace space;
  space.set_axis("lr", {0.001, 80.0});
  TunerOptions options;
  options.strategy = "grid";
  Tuner tuner(space, {{"lr", 0.001}}, executor, options);
  tuner.run();
  ASSERT_EQ(tuner.trials().size(), 2u);
  EXPECT_EQ(tuner.trials()[0].outcome, Outcome::Ok) << tuner.trials()[0].reason;
  const Trial& wild = tuner.trials()[1];
  EXPECT_TRUE(wild.outcome == Outcome::Rejected || wild.outcome == Outcome::Diverged) << wild.outcome << ": " << wild.reason;
  EXPECT_EQ(tuner.best()->point["lr"], 0.001);
}

}  // namespace
}  // namespace dyno
