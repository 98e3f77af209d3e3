// StagedSearch: dyno's knob-aware search. In the order the knobs interact in a training loop (the
// start point in a few processes, process settings, pipeline, batch growth and bisection, the other
// knobs, process settings again, local refinement, a regrowth, the final race: docs/tuner.md,
// "staged", steps 1-8), each step is one Tuner::compare(candidate, best so far), whose process races
// the best so far; a budget keeps a process for every value the stages have yet to try.
#pragma once

#include <cstdint>

#include "tuner/strategy.h"

namespace dyno {

class StagedSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
  // An estimate (the search adapts): the start point's processes, every value of the process,
  // pipeline and other axes in two processes, up to four batch sizes, one refinement round's
  // neighbours, the process values once more, and the race.
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;

  static constexpr int64_t kStartProcesses = 3;
};

}  // namespace dyno
