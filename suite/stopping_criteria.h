// StoppingCriteria: the rules that end a training run before its epochs are done, each decided
// from what the run has measured so far and nothing else (torch-free, so that each is tested on
// plain numbers), each with its parameter named as in RunConfig (the shape of nvbench's
// stopping_criterion):
//   after a throughput window  stable          the median window's 95% interval is narrower than
//                                              max_relative_ci of the median (measure_rel_ci)
//                              outpaced        the interval's upper end, times the ranks, is below
//                                              stop_below, the tuner's incumbent (measure_stop_below)
//   after an evaluation        target_reached  the metric reached target and stop_at_target is set
//                              plateau         plateau_patience evaluations in a row without a new best
// Both window rules wait for min_windows windows, the fewest with which the interval reaches 95%.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dyno/reports/statistics.h"

namespace dyno {

class StoppingCriteria {
 public:
  struct Parameters {
    double max_relative_ci = 0;  // stable: 0 = off
    double stop_below = 0;       // outpaced: 0 = off; the bar is for the whole job
    double ranks = 1;            // windows are per rank
    size_t min_windows = kFewestWindowsFor95;
    double target = 0;
    bool higher_is_better = true;
    bool stop_at_target = false;
    int64_t plateau_patience = 0;  // 0 = off
  };

  explicit StoppingCriteria(Parameters parameters);

  // "stable", "outpaced" (stable first when both hold) or "" to go on.
  std::string after_window(const std::vector<double>& windows) const;
  // Records the metric and returns "target_reached", "plateau" or "" to go on.
  std::string after_evaluation(double metric);
  // Never with no target (0).
  bool reached(double metric) const;

  // What after_evaluation has seen, for a saved state: the best metric (+-inf before any) and the
  // evaluations since it improved; restore() continues from there in a resumed run.
  double best_metric() const { return best_metric_; }
  int64_t evaluations_without_improvement() const { return evaluations_without_improvement_; }
  void restore(double best_metric, int64_t evaluations_without_improvement);
  // Where the evaluations so far leave the run (a resumed one, before its first step): "plateau"
  // after plateau_patience in a row without a new best, "target_reached" when the target was
  // reached (`target_was_reached`) and stop_at_target is set, else "".
  std::string standing(bool target_was_reached) const;

 private:
  Parameters parameters_;
  double best_metric_;
  int64_t evaluations_without_improvement_ = 0;
};

}  // namespace dyno
