// CommandTrialExecutor: a trial is one run of an external program (ProgramCommand) in its own
// process group, watched through its report (ProgramReport) while it runs.
//  - Throughput trials: the windows after the first `warmup_windows` are measured; the program is
//    stopped once it has `windows_per_unit` of them per unit, or their median's 95% interval is
//    within measure_rel_ci, or (a race) wholly below TrialRequest::stop_below, or the time cap has
//    passed with at least one measured window. Losses come from every window.
//  - Time-to-target trials: the program is stopped at the first evaluation that meets the target;
//    its time is the evaluation's "elapsed" (or when dyno read it). Reaching nothing within the
//    cap, or ending without, is "rejected".
//  - A program that reports nothing is timed as a whole process: one window of 1 run per wall
//    second (throughput), or its wall time when it exits 0 (time to target).
//  - Every knob of the point must be acknowledged, by a {knob} placeholder in the command or in
//    the program's knobs line with the same value; otherwise the trial is invalid_config, so an
//    ignored knob never wins.
// Crash, hang, OOM and NaN become outcomes as for `dyno train` trials (the NaN through the guard).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dyno/trials/program_command.h"
#include "dyno/tuner/trial_executor.h"

namespace dyno {

// "accuracy>=0.85" or "val_loss<=0.3": the evaluation that ends a time-to-target trial.
struct TargetSpec {
  std::string metric;
  bool higher_is_better = true;
  double value = 0;

  static TargetSpec parse(const std::string& text);  // throws UserError naming the text
  bool met_by(double v) const { return higher_is_better ? v >= value : v <= value; }
  std::string to_string() const;
};

struct CommandTrialOptions {
  ProgramCommand program;
  std::string trial_dir;                          // each trial: <trial_dir>/<name>/{point.json,report.jsonl,log.txt}
  std::string tune_dir;                           // the tune's --out, DYNO_TUNE_DIR of every trial (what its --resume ends)
  nlohmann::json base = nlohmann::json::object();  // knob values under every point (a phase's fixed settings)
  int64_t seed = 0;                               // DYNO_SEED at budget level 1
  int64_t warmup_windows = 2;
  int64_t windows_per_unit = 16;
  double measure_rel_ci = 0.03;
  double time_cap_s = 60;  // per unit (throughput) or per run (to target)
  double timeout_s = 300;
  int64_t memory_limit_bytes = 0;  // peak resident memory of the program; 0 = none
  std::optional<TargetSpec> target;  // set: time-to-target trials (budget level L runs seed + L - 1)
};

class CommandTrialExecutor : public TrialExecutor {
 public:
  explicit CommandTrialExecutor(CommandTrialOptions options) : options_(std::move(options)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override;
  void set_time_cap(double seconds) override { options_.time_cap_s = seconds; }
  const CommandTrialOptions& options() const { return options_; }

  // Kills what the trials of a tune in `out` killed outright (kill -9: it reaches only a trial's
  // own process) left running: every process that inherited DYNO_TUNE_DIR=`out` (canonical; a tune
  // whose --out lies inside `out` has its own), in rounds (what one forked while a scan ran is found
  // by the next). Returns how many.
  static int end_trials_left_running(const std::string& out);

 private:
  CommandTrialOptions options_;
};

}  // namespace dyno
