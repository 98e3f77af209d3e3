// ProcessTrialExecutor: runs each trial as `dyno train --config trial.json --out report.json` in
// its own child process (fork + execv of an argument vector, never a shell), in its own process
// group, killed with the tuner (PR_SET_PDEATHSIG) and after `timeout_s`. The exit status, signal
// or report becomes the Trial's outcome: ok, diverged, oom, crashed (SIGSEGV and other signals),
// aborted (SIGABRT), timeout, invalid_config; a peak above memory_limit_bytes is oom.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dyno/reports/run_config.h"
#include "dyno/tuner/trial_executor.h"

namespace dyno {

struct ProcessTrialOptions {
  std::string dyno_binary;  // path of the dyno executable
  // A launcher template put in front of every trial (`torchrun --nproc-per-node {ddp.world_size}`,
  // `srun ...`), its {knob} placeholders filled from the trial's config; the ranks it starts take
  // the world size from its environment. Empty: `dyno launch` starts data-parallel trials.
  std::vector<std::string> launcher;
  std::string trial_dir;    // each trial writes <trial_dir>/<name>/{config.json,report.json,log.txt}
  RunConfig base;           // the run settings every trial starts from
  int64_t measure_steps = 200;      // optimizer steps per measurement unit (budget level 1), after warm-up
  double time_cap_s = 60;           // per measurement unit (per seed for to-target trials)
  double timeout_s = 300;           // hard kill
  double measure_rel_ci = 0.03;     // stop early once the median's 95% CI is within +-3%
  int64_t memory_limit_bytes = 0;   // 0 = none
  bool to_target = false;           // time-to-target trials: train until the target (or the cap);
                                    // budget level L then runs with seed base + L - 1
  int64_t profile_steps = 0;        // > 0: `dyno train --profile <trial>/trace.json` over this many
                                    // steps after warm-up, which are added to the run
};

class ProcessTrialExecutor : public TrialExecutor {
 public:
  explicit ProcessTrialExecutor(ProcessTrialOptions options) : options_(std::move(options)) {}
  Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) override;
  // The full RunConfig a trial runs (base + point + measurement settings).
  RunConfig trial_config(const nlohmann::json& point, const TrialRequest& request) const;
  const ProcessTrialOptions& options() const { return options_; }
  void set_time_cap(double seconds) override { options_.time_cap_s = seconds; }

 private:
  ProcessTrialOptions options_;
};

// Path of the running executable (/proc/self/exe).
std::string current_executable();

}  // namespace dyno
