// StagedSearch: dyno's knob-aware search. It follows the order in which the knobs interact in a
// training loop instead of treating them as anonymous dimensions:
//   0. the start point, measured in a few processes: the first estimate of the noise between
//      processes that every later comparison uses;
//   1. process-wide settings (threads, host_allocator): they change the cost of every later trial;
//   2. data pipeline (num_workers, prefetch, pin_memory), at the start batch;
//   3. batch size grown geometrically (x2) until throughput stops improving (two sizes in a row
//      not better: the plateau), is worse, or a trial fails on memory, then refined by bisection
//      between the best batch and the first one past it; after an OOM, batches within 10% of
//      it are not tried;
//   4. every other axis (amp, set_to_none, channels_last, checkpointing, ...), one value at a
//      time from the best so far (coordinate descent);
//   5. the process-wide settings once more: how many threads pay depends on the work per step,
//      which the batch and the numerics have set since step 1;
//   6. local refinement: the neighbours of the best value on each ordered axis, and the other
//      values of the rest, repeated while it improves;
//   7. when the knobs moved since the first growth (bf16 makes larger batches pay, checkpointing
//      makes them fit), the batch grown once more, and when it moved, the refinement once more;
//   8. the final race among the leading points (Tuner::final_race); when it shows the climb's point
//      worse than its winner, whose neighbours the climb never measured, the refinement once more
//      from the race's winner and the race once more.
// Every step is one decision, Tuner::compare(candidate, best so far): a new value is kept when it
// is better, or equivalent and preferred by the tie-breaks; a budget keeps a process for every
// value the stages have yet to try (Tuner::reserve). Each candidate's process races the best so
// far and stops early once it cannot win (Tuner::measure).
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
