// Strategy: decides which points to measure, through Tuner::measure, and nothing else (no timing,
// no bookkeeping). Strategies are deterministic for a seed, so a resumed run asks for the same
// points in the same order and the journal answers the ones already measured.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dyno {

class SearchSpace;
class Tuner;

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual void run(Tuner& tuner) = 0;
  // How many trials the strategy runs on `space` with at most `max_trials` (0 = no limit): exact
  // where the strategy's plan is fixed, an estimate where it adapts. For the progress line's ETA.
  virtual int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const = 0;

  // The leading points a final race starts with, and its most rounds (Tuner::final_race).
  static constexpr size_t kFinalists = 3;
  static constexpr int64_t kRaceRounds = 24;
};

// `planned` trials, or `max_trials` when that is lower (0 = no limit).
inline int64_t within_trial_limit(int64_t planned, int64_t max_trials) { return max_trials > 0 && max_trials < planned ? max_trials : planned; }

// grid | random | staged | halving; throws UserError naming the valid ones.
std::unique_ptr<Strategy> make_strategy(const std::string& name);

}  // namespace dyno
