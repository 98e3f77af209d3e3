// Trials of an external program, with small fake programs (POSIX shell scripts) that follow or
// break the report protocol: every way a program can behave becomes a recorded outcome.
#include "dyno/trials/command_trial_executor.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>

#include <gtest/gtest.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"
#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

class CommandTrials : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/dyno_command_trials_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Options for a program whose body is `script` (sh), run as `sh script.sh ARGS...`.
  CommandTrialOptions program(const std::string& script, std::vector<std::string> args = {}) {
    write_file_atomically(dir_ + "/program.sh", script);
    std::vector<std::string> command = {"/bin/sh", dir_ + "/program.sh"};
    command.insert(command.end(), args.begin(), args.end());
    CommandTrialOptions o;
    o.program = ProgramCommand(command, {});
    o.trial_dir = dir_ + "/trials";
    o.warmup_windows = 2;
    o.windows_per_unit = 16;
    o.time_cap_s = 20;
    o.timeout_s = 20;
    return o;
  }
  Trial run(const CommandTrialOptions& options, const nlohmann::json& point, TrialRequest request = {}) {
    CommandTrialExecutor executor(options);
    return executor.execute(point, request, "t" + std::to_string(++count_));
  }

  std::string dir_;
  int count_ = 0;
};

// Shell: writes `n` windows of 100 items in 0.5 s (loss falling from 2), after acknowledging $1.
const char* kWindows = R"(n=$2
printf '{"event": "knobs", "applied": {"batch_size": %s}}\n' "$1" >> "$DYNO_REPORT"
i=0
while [ $i -lt $n ]; do
  printf '{"event": "window", "items": 100, "seconds": 0.5, "loss": 2.%s}\n' $((9 - i % 10)) >> "$DYNO_REPORT"
  i=$((i + 1))
done
printf '{"event": "done"}\n' >> "$DYNO_REPORT"
)";

TEST_F(CommandTrials, MeasuresTheWindowsAfterTheWarmUpAndKeepsEveryLoss) {
  const Trial t = run(program(std::string("sleep 0.1\n") + kWindows, {"64", "10"}), {{"batch_size", 64}});  // (sampled from 10 ms on)
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_EQ(t.windows.size(), 8u);  // 10 windows less 2 of warm-up
  EXPECT_DOUBLE_EQ(t.samples_per_second, 200);
  EXPECT_EQ(t.losses.size(), 10u);
  EXPECT_DOUBLE_EQ(t.losses.front(), 2.9);
  EXPECT_GT(t.peak_memory_bytes, 0);
}

TEST_F(CommandTrials, TheProgramIsStoppedOnceItsWindowsAreMeasured) {
  auto options = program(R"(printf '{"event": "knobs", "applied": {"batch_size": 8}}\n' >> "$DYNO_REPORT"
while true; do printf '{"event": "window", "items": 8, "seconds": 0.01, "loss": 1}\n' >> "$DYNO_REPORT"; sleep 0.01; done
)");
  options.measure_rel_ci = -1;  // only the window count stops it (its windows are all alike)
  const Trial t = run(options, {{"batch_size", 8}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_GE(t.windows.size(), 16u);
  EXPECT_LT(t.wall_time_s, 10);
}

TEST_F(CommandTrials, ATornLastLineIsIgnored) {
  const Trial t = run(program(std::string(kWindows) + "printf '{\"event\": \"win' >> \"$DYNO_REPORT\"\n", {"64", "4"}), {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_EQ(t.windows.size(), 2u);
}

TEST_F(CommandTrials, AKnobTheProgramDidNotAcknowledgeMakesTheTrialInvalid) {
  Trial t = run(program(kWindows, {"64", "4"}), {{"batch_size", 64}, {"compile", true}});
  EXPECT_EQ(t.outcome, Outcome::InvalidConfig);
  EXPECT_EQ(t.reason, R"(knob compile is not acknowledged: the program's knobs line does not list it (it lists {"batch_size":64}))");
  t = run(program(kWindows, {"32", "4"}), {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::InvalidConfig);
  EXPECT_EQ(t.reason, "knob batch_size: the program applied 32, not 64");
  // A knob given on the command line is acknowledged by construction.
  t = run(program(kWindows, {"64", "4", "{compile}"}), {{"batch_size", 64}, {"compile", true}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
}

TEST_F(CommandTrials, ACrashAHangAndAnOutOfMemoryAreOutcomes) {
  Trial t = run(program("kill -SEGV $$\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed);
  EXPECT_NE(t.reason.find("killed by signal 11"), std::string::npos) << t.reason;
  // The error, though a launcher's footer follows it (torchrun's), and the log to read.
  t = run(program("echo 'ValueError: bad shape' >&2; echo '=========' >&2; echo '  traceback : To enable traceback see: https://x' >&2; exit 1\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed);
  EXPECT_EQ(t.reason.rfind("exit status 1 (log: ", 0), 0u) << t.reason;
  EXPECT_NE(t.reason.find("/log.txt): ValueError: bad shape"), std::string::npos) << t.reason;
  t = run(program("echo 'torch.OutOfMemoryError: CUDA out of memory.' >&2; echo '  traceback : To enable traceback see: https://x' >&2; exit 1\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Oom) << t.reason;
  t = run(program("echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; exit 1\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Oom);
  auto hang = program("sleep 30\n");
  hang.timeout_s = 1;
  t = run(hang, {});
  EXPECT_EQ(t.outcome, Outcome::Timeout);
  EXPECT_LT(t.wall_time_s, 5);
}

// A wrapper script's shell reports the signal that killed the program it ran as 128 + the signal.
TEST_F(CommandTrials, AWrapperShellsExitStatusOfASignalIsThatSignal) {
  Trial t = run(program("sh -c 'kill -ABRT $$'\nexit $?\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Aborted) << t.reason;
  EXPECT_NE(t.reason.find("exit status 134, a process it ran killed by signal 6 (Aborted) (log: "), std::string::npos) << t.reason;
  t = run(program("sh -c 'kill -KILL $$'\nexit $?\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed) << t.reason;
  EXPECT_NE(t.reason.find("often the kernel's out-of-memory killer"), std::string::npos) << t.reason;
  t = run(program("exit 130\n"), {});  // an interrupt is not a crash of that kind: the program's own exit
  EXPECT_EQ(t.reason.find("killed by signal"), std::string::npos) << t.reason;
  // What the log says comes first: a C++ terminate after running out of memory aborts, and is oom.
  t = run(program("echo 'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB' >&2; sh -c 'kill -ABRT $$'\nexit $?\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Oom) << t.reason;
}

// What a program started in a session of its own (torchrun's ranks) goes with the trial too.
TEST_F(CommandTrials, AProcessTheProgramStartedInItsOwnSessionEndsWithTheTrial) {
  const std::string marker = "41.4" + std::to_string(::getpid() % 1000);
  Trial t = run(program("setsid sleep " + marker + " &\nsleep 0.2\n" + kWindows, {"64", "20"}), {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_NE(std::system(("pgrep -f '[s]leep " + marker + "' > /dev/null").c_str()), 0) << "a process of the trial outlived it";
}

// A trial's program inherits only the standard streams: a descriptor the tuner holds (a CI job's
// output pipe) is not kept open by what a trial leaves behind.
TEST_F(CommandTrials, AProgramInheritsOnlyTheStandardStreams) {
  const int held = ::open("/dev/null", O_RDONLY);  // without close-on-exec
  ASSERT_GE(held, 3);
  Trial t = run(program("if [ -e /proc/self/fd/" + std::to_string(held) + " ]; then echo 'Error: inherited' >&2; exit 1; fi\n"
                        "printf '{\"event\": \"done\"}\\n' >> \"$DYNO_REPORT\"\n"),
                {});
  ::close(held);
  EXPECT_EQ(t.reason.find("inherited"), std::string::npos) << t.reason;
}

TEST_F(CommandTrials, ANanLossIsRejectedByTheConvergenceGuard) {
  CommandTrialExecutor executor(program(R"(printf '{"event": "knobs", "applied": {"batch_size": 8}}\n' >> "$DYNO_REPORT"
for loss in 2.0 1.5 NaN 1.0; do printf '{"event": "window", "items": 8, "seconds": 0.1, "loss": %s}\n' $loss >> "$DYNO_REPORT"; done
printf '{"event": "done"}\n' >> "$DYNO_REPORT"
)"));
  SearchSpace space = SearchSpace::from_json(nlohmann::json::parse(R"({"axes": {"batch_size": [8]}})"));
  Tuner tuner(space, {{"batch_size", 8}}, executor, TunerOptions{});
  const Trial& t = tuner.measure({{"batch_size", 8}}, "grid");
  EXPECT_EQ(t.outcome, Outcome::Rejected);
  EXPECT_EQ(t.reason, "convergence guard: loss is nan at window 3");
}

TEST_F(CommandTrials, AProgramThatReportsNothingIsTimedAsAWholeProcess) {
  Trial t = run(program("sleep 0.3\n", {"{batch_size}"}), {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  ASSERT_EQ(t.windows.size(), 1u);
  EXPECT_NEAR(t.samples_per_second, 1 / t.wall_time_s, 1e-9);
  EXPECT_GT(t.wall_time_s, 0.3);
  // Without a placeholder it cannot acknowledge the knob.
  t = run(program("sleep 0.1\n"), {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::InvalidConfig);
  EXPECT_NE(t.reason.find("the program reported nothing"), std::string::npos) << t.reason;
}

TEST_F(CommandTrials, AMalformedReportLineFailsTheTrialNamingTheLine) {
  const Trial t = run(program(R"(printf '{"event": "done"}\nloss=3\n{"event": "done"}\n' >> "$DYNO_REPORT")" "\n"), {});
  EXPECT_EQ(t.outcome, Outcome::InvalidReport);
  EXPECT_NE(t.reason.find("report.jsonl line 2: not a JSON object: loss=3"), std::string::npos) << t.reason;
}

// A program that wrote its done line has finished: what it still does (a loader's or a logger's
// teardown) is not the trial's, which ends there, under either objective.
TEST_F(CommandTrials, AProgramLingeringAfterItsDoneLineIsStoppedThere) {
  auto options = program(std::string(kWindows) + "sleep 30\n", {"64", "10"});
  Trial t = run(options, {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_LT(t.wall_time_s, 10);
  options = program(R"(printf '{"event": "eval", "metric": "accuracy", "value": 0.5}\n{"event": "done"}\n' >> "$DYNO_REPORT"
sleep 30
)");
  options.target = TargetSpec::parse("accuracy>=0.9");
  t = run(options, {});
  EXPECT_EQ(t.outcome, Outcome::Rejected);
  EXPECT_LT(t.wall_time_s, 10);
  EXPECT_EQ(t.reason.find("time cap"), std::string::npos) << t.reason;
}

TEST_F(CommandTrials, ExitingWithoutDoneIsACrash) {
  const Trial t = run(program(R"(printf '{"event": "window", "items": 8, "seconds": 0.1}\n' >> "$DYNO_REPORT")" "\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed);
  EXPECT_EQ(t.reason, "exit status 0 but the report has no done line: the program stopped before it finished");
}

// Each line written with '>' (a file opened for writing, not appending): what the program wrote
// before is gone, and the reason says how to write the report.
TEST_F(CommandTrials, AReportRewrittenWhileTheProgramRanIsSaidInTheReason) {
  const Trial t = run(program(R"(for i in 1 2 3 4; do
  printf '{"event": "window", "items": 8, "seconds": 0.1}\n' > "$DYNO_REPORT"
  sleep 0.3
done
printf '{"event": "done"}\n' > "$DYNO_REPORT"
)"), {});
  EXPECT_EQ(t.outcome, Outcome::Rejected);
  EXPECT_NE(t.reason.find("no measured window: it reported 0 windows"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("times while the program ran: open it for appending (mode \"a\")"), std::string::npos) << t.reason;
}

// Shell: evaluations 0.5, 0.7, 0.9 at elapsed 1, 2, 3, then (unless stopped) a long sleep.
const char* kEvaluations = R"(for e in 1:0.5 2:0.7 3:0.9; do
  printf '{"event": "eval", "metric": "accuracy", "value": %s, "elapsed": %s}\n' ${e#*:} ${e%%:*} >> "$DYNO_REPORT"
done
sleep 30
printf '{"event": "done"}\n' >> "$DYNO_REPORT"
)";

TEST_F(CommandTrials, ATimeToTargetRunEndsAtTheFirstEvaluationThatMeetsTheTarget) {
  auto options = program(kEvaluations);
  options.target = TargetSpec::parse("accuracy>=0.8");
  const Trial t = run(options, {});
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  ASSERT_TRUE(t.time_to_target_s.has_value());
  EXPECT_DOUBLE_EQ(*t.time_to_target_s, 3.0);
  EXPECT_LT(t.wall_time_s, 10);  // stopped, not slept through
  options.target = TargetSpec::parse("accuracy>=0.95");
  options.time_cap_s = 1.5;
  const Trial missed = run(options, {});
  EXPECT_EQ(missed.outcome, Outcome::Rejected);
  EXPECT_NE(missed.reason.find("did not reach the target accuracy>=0.95: best accuracy 0.9000 in 3 evaluations"), std::string::npos) << missed.reason;
}

// A target on a metric the program reports under another name (or none) says what it reported.
TEST_F(CommandTrials, AMissedTargetNamesTheMetricsTheProgramReported) {
  auto options = program(R"(printf '{"event": "eval", "metric": "acc", "value": 0.9}
{"event": "eval", "value": 0.9}
{"event": "done"}
' >> "$DYNO_REPORT")" "\n");
  options.target = TargetSpec::parse("accuracy>=0.8");
  const Trial t = run(options, {});
  EXPECT_EQ(t.outcome, Outcome::Rejected);
  EXPECT_NE(t.reason.find("best accuracy never reported in 2 evaluations"), std::string::npos) << t.reason;
  EXPECT_NE(t.reason.find("; its eval lines name (no \"metric\" field), acc, not accuracy"), std::string::npos) << t.reason;
}

// A program that exits on its own wrote all it will: a last line without its newline counts.
TEST_F(CommandTrials, ALastLineWithoutNewlineCountsOnceTheProgramExited) {
  const Trial t = run(program(R"(printf '{"event": "window", "items": 8, "seconds": 0.1}\n{"event": "done"}' >> "$DYNO_REPORT")" "\n"), {});
  EXPECT_NE(t.reason, "exit status 0 but the report has no done line: the program stopped before it finished");
  EXPECT_NE(t.outcome, Outcome::Crashed) << t.reason;
}

// A program that reported its knobs and then no window (compiling, say) is stopped at the cap.
TEST_F(CommandTrials, AProgramSilentAfterItsKnobsLineIsStoppedAtTheCap) {
  auto options = program(R"(printf '{"event": "knobs", "applied": {"batch_size": 8}}\n' >> "$DYNO_REPORT"; sleep 30)" "\n");
  options.time_cap_s = 1;
  const Trial t = run(options, {{"batch_size", 8}});
  EXPECT_EQ(t.outcome, Outcome::Rejected) << t.reason;
  EXPECT_NE(t.reason.find("no measured window: it reported 0 windows"), std::string::npos) << t.reason;
  EXPECT_LT(t.wall_time_s, 10);
}

TEST_F(CommandTrials, AProgramStoppedAtTheTimeCapBeforeItsFirstLineIsRejectedNotInvalid) {
  auto options = program("sleep 30\n");  // compiling, say, before the knobs line
  options.target = TargetSpec::parse("accuracy>=0.8");
  options.time_cap_s = 1;
  const Trial slow = run(options, {{"batch_size", 64}});
  EXPECT_EQ(slow.outcome, Outcome::Rejected) << slow.reason;
  EXPECT_EQ(slow.reason, "stopped at the time cap (1.0 s) before it reported anything");
  EXPECT_LT(slow.wall_time_s, 10);
  // Once it has written evaluations, a knob it never acknowledged still makes the trial invalid.
  auto evaluating = program(kEvaluations);
  evaluating.target = TargetSpec::parse("accuracy>=0.8");
  const Trial unacknowledged = run(evaluating, {{"batch_size", 64}});
  EXPECT_EQ(unacknowledged.outcome, Outcome::InvalidConfig) << unacknowledged.reason;
}

// A trial's peak memory is what its program and the processes it started held, sampled while they
// ran: not what the tuner held when it forked the program (the kernel's figure counts that).
TEST_F(CommandTrials, ThePeakIsTheProgramsAndItsWorkersNotTheTunersOwn) {
  Trial small = run(program(std::string("sleep 0.6\n") + kWindows, {"64", "20"}), {{"batch_size", 64}});
  ASSERT_EQ(small.outcome, Outcome::Ok) << small.reason;
  EXPECT_GT(small.peak_memory_bytes, 0);
  EXPECT_LT(small.peak_memory_bytes, 32ll << 20);  // a shell; this test process holds hundreds of MiB
  // A worker (a background process of the program's group) holding 60 MB.
  Trial worker = run(program(std::string("sh -c 'x=$(head -c 60000000 /dev/zero | tr \"\\0\" a); sleep 3' &\nsleep 1.5\n") + kWindows, {"64", "20"}),
                     {{"batch_size", 64}});
  ASSERT_EQ(worker.outcome, Outcome::Ok) << worker.reason;
  EXPECT_GT(worker.peak_memory_bytes, 60ll * 1000 * 1000);
  // And one in a session of its own (as torchrun starts its ranks), a descendant all the same.
  Trial rank = run(program(std::string("setsid sh -c 'x=$(head -c 60000000 /dev/zero | tr \"\\0\" a); sleep 3' &\nsleep 1.5\n") + kWindows, {"64", "20"}),
                   {{"batch_size", 64}});
  ASSERT_EQ(rank.outcome, Outcome::Ok) << rank.reason;
  EXPECT_GT(rank.peak_memory_bytes, 60ll * 1000 * 1000);
}

TEST_F(CommandTrials, APeakAboveTheMemoryLimitIsOutOfMemoryUnderEitherObjective) {
  auto throughput = program(std::string("sleep 0.2\n") + kWindows, {"64", "20"});  // (sampled once it has run 10 ms)
  throughput.memory_limit_bytes = 1;  // any process's resident memory is above it
  Trial t = run(throughput, {{"batch_size", 64}});
  EXPECT_EQ(t.outcome, Outcome::Oom) << t.reason;
  EXPECT_NE(t.reason.find("is above the limit 1 B"), std::string::npos) << t.reason;
  auto to_target = program(std::string("sleep 0.2\n") + kEvaluations);
  to_target.target = TargetSpec::parse("accuracy>=0.8");
  to_target.memory_limit_bytes = 1;
  t = run(to_target, {});
  EXPECT_EQ(t.outcome, Outcome::Oom) << t.reason;
}

TEST_F(CommandTrials, TheSeedOfBudgetLevelLIsTheLthAndTheEnvironmentCarriesThePoint) {
  auto options = program(R"(env | grep '^DYNO_' | sort > "$(dirname "$DYNO_REPORT")/env.txt"; cp "$DYNO_POINT" "$(dirname "$DYNO_REPORT")/point-copy.json")" "\n",
                         {"{amp}"});
  options.target = TargetSpec::parse("accuracy>=0.8");
  options.seed = 5;
  options.base = {{"lr", 0.01}};
  TrialRequest request;
  request.budget_level = 3;
  const Trial t = run(options, {{"amp", "bf16"}}, request);
  EXPECT_EQ(t.outcome, Outcome::InvalidConfig);  // lr is neither on its command line nor reported
  const std::string env = read_file(dir_ + "/trials/t1/env.txt");
  for (const char* line : {"DYNO_KNOB_AMP=bf16\n", "DYNO_KNOB_LR=0.01\n", "DYNO_SEED=7\n", "DYNO_OBJECTIVE=time-to-target\n", "DYNO_TARGET=accuracy>=0.8\n"})
    EXPECT_NE(env.find(line), std::string::npos) << line << " in\n" << env;
  EXPECT_EQ(nlohmann::json::parse(read_file(dir_ + "/trials/t1/point-copy.json")), nlohmann::json::parse(R"({"amp": "bf16", "lr": 0.01})"));
}

TEST_F(CommandTrials, ALauncherTemplateGoesInFrontOfTheProgram) {
  auto options = program(kWindows, {"{batch_size}", "4"});
  options.program = ProgramCommand(options.program.command(),
                                   {"/bin/sh", "-c", "echo launched {ddp.world_size} ranks > " + dir_ + "/launcher.txt; exec \"$@\"", "launcher"});
  const Trial t = run(options, {{"batch_size", 16}, {"ddp.world_size", 2}});
  EXPECT_EQ(read_file(dir_ + "/launcher.txt"), "launched 2 ranks\n");
  // The program never saw ddp.world_size: the launcher's placeholder is not the program's acknowledgement.
  EXPECT_EQ(t.outcome, Outcome::InvalidConfig);
  EXPECT_NE(t.reason.find("knob ddp.world_size is not acknowledged"), std::string::npos) << t.reason;
  // A program that reports nothing: the reason says the launcher's placeholder is not the program's.
  auto silent = program("exit 0\n", {"{batch_size}"});
  silent.program = ProgramCommand(silent.program.command(), {"/bin/sh", "-c", "echo {ddp.world_size} > /dev/null; exec \"$@\"", "launcher"});
  const Trial quiet = run(silent, {{"batch_size", 16}, {"ddp.world_size", 2}});
  EXPECT_EQ(quiet.outcome, Outcome::InvalidConfig);
  EXPECT_NE(quiet.reason.find("no {ddp.world_size} placeholder (a program that reports nothing can only take its knobs on its command line; the "
                              "launcher's is the launcher's, and the program may not see it)"),
            std::string::npos)
      << quiet.reason;
}

// A measurement at a higher budget level runs more units, and has their cap and their timeout:
// a cap that grew past --trial-timeout is the trial's time, not a hang.
TEST_F(CommandTrials, ATrialOfSeveralUnitsHasTheTimeoutOfEach) {
  auto options = program(R"(printf '{"event": "knobs", "applied": {"batch_size": 8}}\n' >> "$DYNO_REPORT"
i=0
while true; do printf '{"event": "window", "items": %s, "seconds": 0.25}\n' $((100 + 200 * (i % 2))) >> "$DYNO_REPORT"; i=$((i + 1)); sleep 0.25; done
)");
  options.time_cap_s = 2;
  options.timeout_s = 3;
  TrialRequest request;
  request.budget_level = request.units = 2;  // a cap of 4 s
  const Trial t = run(options, {{"batch_size", 8}}, request);
  EXPECT_EQ(t.outcome, Outcome::Ok) << t.reason;
  EXPECT_GT(t.wall_time_s, 3.5);
  EXPECT_LT(t.wall_time_s, 10);
}

TEST(TargetSpec, ParsesAMetricAComparisonAndAValue) {
  const auto t = TargetSpec::parse("val_loss<=0.3");
  EXPECT_EQ(t.metric, "val_loss");
  EXPECT_FALSE(t.higher_is_better);
  EXPECT_TRUE(t.met_by(0.25));
  EXPECT_FALSE(t.met_by(0.31));
  EXPECT_THROW(TargetSpec::parse("accuracy=0.9"), UserError);
  EXPECT_THROW(TargetSpec::parse("accuracy>=high"), UserError);
  // Spaces around the comparison are layout, not part of the metric's name or the number.
  const auto spaced = TargetSpec::parse(" accuracy >= 0.85 ");
  EXPECT_EQ(spaced.metric, "accuracy");
  EXPECT_DOUBLE_EQ(spaced.value, 0.85);
  EXPECT_EQ(spaced.to_string(), "accuracy>=0.85");
  for (const char* bad : {">=0.9", " >= 0.9", "top 1>=0.9", "acc>>=0.9"}) {
    try {
      TargetSpec::parse(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a metric name"), std::string::npos) << e.what();
    }
  }
}

// A program's own out-of-space words about another file system (a container's small /dev/shm
// under many loader workers) are its crash, not a full trial folder: the search goes on. A
// message in another encoding than UTF-8 is kept with its odd bytes replaced, so the journal and
// the report can hold it.
TEST_F(CommandTrials, AProgramsOwnFailureWordsAreItsCrash) {
  Trial t = run(program(R"(echo 'RuntimeError: unable to write to file </torch_1_2>: No space left on device (28)' >&2; exit 1
)"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed) << t.reason;
  EXPECT_NE(t.reason.find("No space left on device"), std::string::npos) << t.reason;
  t = run(program("printf 'RuntimeError: caf\\351 au lait\\n' >&2; exit 1\n"), {});
  EXPECT_EQ(t.outcome, Outcome::Crashed) << t.reason;
  EXPECT_NE(t.reason.find("RuntimeError: caf\xEF\xBF\xBD au lait"), std::string::npos) << t.reason;
  EXPECT_NO_THROW(nlohmann::json(t.reason).dump());
}

}  // namespace
}  // namespace dyno
