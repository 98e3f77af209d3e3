// SuccessiveHalving: many candidates measured briefly, the best third measured three times
// longer, and so on until nine or fewer remain (Jamieson & Talwalkar; the "rungs" of
// Hyperband); those run the final race (Tuner::final_race).
#pragma once

#include <cstdint>

#include "dyno/tuner/strategy.h"

namespace dyno {

class SuccessiveHalving : public Strategy {
 public:
  void run(Tuner& tuner) override;
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;

  static constexpr int64_t kReduction = 3;  // each rung keeps a third, measured three times longer
  // The rungs end at this many points or fewer: the race drops one only once it is shown worse.
  static constexpr size_t kLastRung = kFinalists * static_cast<size_t>(kReduction);
};

}  // namespace dyno
