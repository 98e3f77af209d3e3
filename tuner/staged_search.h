// StagedSearch: dyno's knob-aware search. It follows the order in which the knobs interact in a
// training loop instead of treating them as anonymous dimensions:
//   0. process-wide settings (threads, host_allocator): they change the cost of every later trial;
//   1. data pipeline (num_workers, prefetch, pin_memory), at the start batch;
//   2. batch size grown geometrically (x2) until throughput stops improving significantly (two
//      ties in a row: the plateau), falls clearly, or a trial fails on memory, then refined by
//      bisection between the best batch and the first one past it; after an OOM, batches within
//      `oom_margin` of it are not tried;
//   3. every other axis (amp, set_to_none, channels_last, checkpointing, ...), one value
//      at a time from the best so far (coordinate descent);
//   4. local refinement: the neighbours of the best value on each ordered axis, and the other
//      values of the rest, repeated while it improves; a value that already lost by more than
//      25% (one thread instead of two) is not tried again, nor is one that lost clearly at a
//      smaller batch when its gap only widens with the batch (fewer threads, fp32 against bf16);
//   5. the batch growth once more from the final point (other knobs move the best batch), with
//      a patience of one for a clear decline too, and, when it moved, the refinement once more at
//      the new batch;
//   6. confirmation: the two fastest distinct points are measured once more (budget level 2: a
//      second process, pooled with the first; the second races the first) and the winner is
//      chosen among those (a lucky short trial does not win);
//   7. when the confirmation's winner has other knobs than where the climb ended, the batch grown
//      from the winner (patient) and the fastest points confirmed once more.
// Every candidate races the best so far: once its throughput's whole interval lies below the
// best's, it stops (the comparison is decided; the rest of its trial would be spent on a loser),
// and a loser with amp gets no fp32 guard reference measured for it (Tuner::measure).
// A step keeps a new value only when Tuner::better says so (intervals separated, or a tie
// broken toward the simpler / cheaper configuration). A tie won by a configuration whose median
// is more than 10% below the other's is settled first: the faster-looking one is measured again
// (level 2, pooled), and the other too if it still ties that far ahead (a wide interval from a
// noisy trial must not stop the climb).
#pragma once

#include <cstdint>
#include <string>

#include "tuner/strategy.h"

namespace dyno {

class Climber;
class SearchSpace;

class StagedSearch : public Strategy {
 public:
  explicit StagedSearch(double oom_margin = 0.1) : oom_margin_(oom_margin) {}
  void run(Tuner& tuner) override;
  // An estimate (the search adapts): every value of the process, pipeline and other axes once,
  // up to four batch sizes (growth, bisection, regrowth), one refinement round's neighbours, a
  // guard reference, and the confirmations.
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;

 private:
  static constexpr size_t kFinalists = 2;
  void grow_batch(Climber& climber, const SearchSpace& space, const std::string& stage, bool patient) const;
  void refine(Climber& climber, const SearchSpace& space, const std::string& stage) const;
  double oom_margin_;
};

}  // namespace dyno
