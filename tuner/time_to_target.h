// Time to target (`dyno tune --objective time-to-target`; docs/tuner.md, "Time to target"): phase 1
// is a throughput Tuner over the space less its convergence axes; phase 2, TargetPhase, trains
// every trial of a second Tuner to the target. The tune command creates both; this is the plan.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "tuner/search_space.h"

namespace dyno {

class Tuner;

// What phase 2's default axes depend on.
struct ConvergenceDefaults {
  int64_t recipe_epochs = 0;      // the recipe's epochs (0: no default horizon axis)
  bool accuracy_target = false;   // the target is an accuracy (label smoothing would raise a loss target)
};

// Moves the convergence axes with more than one value out of `space` (a single value is a setting:
// it stays, so phase 1 measures with it, e.g. lr_scaling=sqrt while the batch grows) and returns
// phase 2's space. Axes the space does not give get defaults: the LR schedule's horizon at 1/6, 1/4
// and 1/3 of the recipe's epochs and at the recipe's (a shorter horizon anneals sooner, which is
// what reaches a target early; the grid runs the shortest first, so that its time cap tightens
// early), the recipe's schedule or one-cycle, and for accuracy targets label smoothing off or 0.1.
// (A program's space gets no defaults: SearchSpace::take_convergence_axes.)
SearchSpace take_convergence_axes(SearchSpace& space, const ConvergenceDefaults& defaults);

// Phase 1 ranks batch sizes by throughput alone, but a larger batch takes fewer steps per epoch and
// often needs more epochs to reach the target. When phase 1's winner has a batch above the recipe's
// (the batch its LR and epochs were tuned for; a program's default), the batches phase 2 tries
// (TargetPhase::refine_batch): every batch of phase 1's axis between the two, the largest first,
// then the recipe's. None when phase 1 has no batch axis or kept a batch no larger.
std::vector<int64_t> recipe_batches(const SearchSpace& throughput_space, const nlohmann::json& winner, int64_t recipe_batch);

// While phase 2's grid and refinements run: a trial that has not reached the target by the best
// time so far, plus a margin for run-to-run noise (x1.3 + 5 s), cannot beat it. At most cap_s.
double search_time_cap(const Tuner& tuner, double cap_s);

// During the final race on the next seeds: one cap for every finalist's seeds, from the best
// first-seed time, loose enough (x2 + 10 s) for a seed that needs one more evaluation than the
// best did. A finalist that misses a seed is never chosen, so a cap that cut a slower seed would
// disqualify it; and the search cap follows best(), which moves with each new seed during the race.
double race_time_cap(const Tuner& tuner, double cap_s);

// The final race's `count` finalists: the fastest point of each horizon (value of `epochs`), the
// fastest first, then the next fastest. The seed moves the epoch at which the target is reached,
// and points on one horizon move together: on the search's seed a longer horizon can reach the
// target at the epoch a shorter one does, and then need an epoch more on the other seeds. Points
// whose first seed reached the target after as many steps at the same batch did the same work
// (their times differ by their processes' speed): among them, the larger target margin ranks first,
// as it does for where the refinements start.
std::vector<nlohmann::json> race_finalists(const Tuner& tuner, size_t count);

struct TargetPhaseOptions {
  double cap_s = 900;  // --verify-cap: no trial trains longer
  int seeds = 1;       // --verify-seeds: the race trains each finalist on max(2, seeds) seeds in all
  std::vector<int64_t> batches;  // recipe_batches: tried at the grid's fastest point
  int64_t recipe_epochs = 0;     // the horizon of epochs = 0 (0: not known, the longest)
  // The peak learning rate `point` trains with, or nullopt when it is not known (a program's):
  // then there is no LR refinement. Not used when the space has an lr axis.
  std::function<std::optional<double>(const nlohmann::json& point)> learning_rate;
};

// Phase 2 on `tuner` (objective time-to-target, strategy grid).
class TargetPhase {
 public:
  explicit TargetPhase(TargetPhaseOptions options) : options_(std::move(options)) {}
  // search_time_cap, or in the race race_time_cap: the tune command sets it after every trial.
  double next_time_cap(const Tuner& tuner) const;
  // The trials the phase runs on `space` at most (for the progress line's ETA): the grid, each
  // batch at every horizon, the LR's two and their neighbours, every finalist on every seed of the race.
  int64_t expected_trials(const SearchSpace& space) const;
  // The grid, the LR refinement, the batch refinement, the race; `set_time_cap` gets next_time_cap
  // whenever the stage changes it. A spent budget ends it: what was measured stands.
  void run(Tuner& tuner, const std::function<void(double)>& set_time_cap);

 private:
  // The race's rounds: one for each seed after the first of max(2, seeds).
  int64_t race_rounds() const { return std::max(2, options_.seeds) - 1; }
  void refine_batch(Tuner& tuner) const;
  void refine_learning_rate(Tuner& tuner) const;
  TargetPhaseOptions options_;
  bool racing_ = false;
};

}  // namespace dyno
