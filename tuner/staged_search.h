// StagedSearch: dyno's knob-aware search, in the order the knobs interact in a training loop
// (docs/tuner.md, "staged", steps 1-8); each step is one Tuner::compare(candidate, best so far).
#pragma once

#include <cstdint>

#include "dyno/tuner/strategy.h"

namespace dyno {

class StagedSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
  // An estimate (the search adapts).
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;

  static constexpr int64_t kStartProcesses = 3;
};

}  // namespace dyno
