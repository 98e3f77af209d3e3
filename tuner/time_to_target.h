// Time to target's plan (docs/tuner.md, "Time to target"): phase 1 is a throughput Tuner over the
// space less its convergence axes; phase 2, TargetPhase, trains every trial to the target.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyno/tuner/search_space.h"

namespace dyno {

class Tuner;

// What phase 2's default axes depend on.
struct ConvergenceDefaults {
  int64_t recipe_epochs = 0;      // the recipe's epochs (0: no default horizon axis)
  bool accuracy_target = false;   // the target is an accuracy (label smoothing would raise a loss target)
};

// Moves the convergence axes with more than one value out of `space` and returns phase 2's space,
// with docs/tuner.md's default axes for those it does not give: the shortest horizon first, so
// that the grid's time cap tightens early.
SearchSpace take_convergence_axes(SearchSpace& space, const ConvergenceDefaults& defaults);

// Phase 2's grid runs at the recipe's batch (the one its LR and epochs were tuned for) when phase
// 1's winner has it or a larger one, and these batches, phase 1's above it up to the winner's and
// at least the next one (phase 1 gives a throughput tie to the smaller batch), the smallest first,
// are TargetPhase::refine_batch's (none when the winner's is below the recipe's).
std::vector<int64_t> larger_batches(const SearchSpace& throughput_space, const nlohmann::json& winner, int64_t recipe_batch);

// The search's time cap: the best time so far with a margin for noise (x1.3 + 5 s); at most cap_s.
double search_time_cap(const Tuner& tuner, double cap_s);

// The race's one cap for every finalist's seeds: the best first-seed time x2 + 10 s, loose enough
// for a seed that needs one more evaluation than the best did (a missed seed disqualifies).
double race_time_cap(const Tuner& tuner, double cap_s);

// The final race's `count` finalists: the fastest point of each horizon (value of `epochs`), the
// fastest first, then the next fastest (docs/tuner.md).
std::vector<nlohmann::json> race_finalists(const Tuner& tuner, size_t count);

struct TargetPhaseOptions {
  double cap_s = 900;  // --verify-cap: no trial trains longer
  int seeds = 1;       // --verify-seeds: the race trains each finalist on max(2, seeds) seeds in all
  std::vector<int64_t> batches;  // larger_batches: tried at the grid's fastest point
  int64_t recipe_epochs = 0;     // the horizon of epochs = 0 (0: not known, the longest)
  // The peak learning rate `point` trains with (without an "lr": the recipe's, scaled to its
  // batch); nullopt (a program's) means no LR refinement.
  std::function<std::optional<double>(const nlohmann::json& point)> learning_rate;
};

// Phase 2 on `tuner` (objective time-to-target, strategy grid).
class TargetPhase {
 public:
  explicit TargetPhase(TargetPhaseOptions options) : options_(std::move(options)) {}
  // search_time_cap, or in the race race_time_cap: the tune command asks for it as each trial starts.
  double next_time_cap(const Tuner& tuner) const;
  // The trials the phase runs on `space` at most (for the progress line's ETA).
  int64_t expected_trials(const SearchSpace& space) const;
  // The grid, the LR refinement, the batch refinement, the race.
  void run(Tuner& tuner);

 private:
  int64_t race_rounds() const { return std::max(2, options_.seeds) - 1; }  // a round for each seed after the first
  nlohmann::json at_batch(const nlohmann::json& from, int64_t batch) const;
  // A value of `epochs` in epochs (0: the recipe's; HUGE_VAL when not known).
  double horizon(const nlohmann::json& epochs) const;
  // The values of the `epochs` axis shorter than `point`'s horizon and at least `covering` epochs
  // long (less 1%: the same training), the shortest first.
  std::vector<nlohmann::json> shorter_horizons(const Tuner& tuner, const nlohmann::json& point, double covering = 0) const;
  void refine_batch(Tuner& tuner) const;
  void refine_learning_rate(Tuner& tuner) const;
  TargetPhaseOptions options_;
  bool racing_ = false;
};

}  // namespace dyno
