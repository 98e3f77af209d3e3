// TrialExecutor: measures one point of the search space at a budget level and returns the Trial.
// The real executors (trials/) run `dyno train` or a user's program in a child process; tests
// give a synthetic one with a known optimum. Executors never throw for a failed trial: the
// failure is the Trial's outcome.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "tuner/trial.h"

namespace dyno {

// What one execution is asked for. budget_level: what the result stands for (its identity).
// units: how many level-1 measurements this process runs; fewer than the level when the tuner
// pools the result with a lower level of the same point. stop_below: a race against the best so
// far: the run may stop as soon as its throughput's whole 95% interval is below this (0 = none).
// loss_windows: only the first this many windows of the loss trajectory are needed (a guard
// reference, compared over the windows its candidate has): the run stops after them (0 = no limit).
// race_id: the id of the best trial raced (a run that stops records it in Trial::outpaced_by).
struct TrialRequest {
  int64_t budget_level = 1;
  int64_t units = 1;
  double stop_below = 0;
  int64_t loss_windows = 0;
  int64_t race_id = 0;
};

class TrialExecutor {
 public:
  virtual ~TrialExecutor() = default;
  virtual Trial execute(const nlohmann::json& point, const TrialRequest& request, const std::string& name) = 0;
  // Changes the time cap (per measurement unit, or per run to the target) of the trials to come.
  virtual void set_time_cap(double /*seconds*/) {}

  // Set by a signal handler: the running trial's process is killed and execute() returns "interrupted".
  static inline std::atomic<bool> interrupted{false};
};

}  // namespace dyno
