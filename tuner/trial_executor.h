// TrialExecutor: measures one point of the search space at a budget level and returns the Trial.
// The real executors (trials/) run `dyno train` or a user's program in a child process; tests
// give a synthetic one with a known optimum. Executors never throw for a failed trial: the
// failure is the Trial's outcome.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "dyno/tuner/trial.h"

namespace dyno {

// What one execution is asked for.
struct TrialRequest {
  int64_t budget_level = 1;  // what the result stands for (its identity)
  int64_t units = 1;         // level-1 measurements to run: fewer than the level when it continues a lower one
  double stop_below = 0;     // a race: the run may stop once its throughput's whole 95% interval is below (0 = none)
  int64_t loss_windows = 0;  // a guard reference: the run stops after this many loss windows (0 = no limit)
  int64_t race_id = 0;       // the best trial raced: a run that stops records it (Trial::outpaced_by)
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
