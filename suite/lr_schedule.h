// LR schedules as pure functions of the optimizer step, so that a resumed run continues on
// exactly the same curve. The horizon is the recipe's full length (epochs x steps per epoch),
// not max_steps, so a short trial measures the first steps of the real run.
#pragma once

#include <cstdint>
#include <string>

namespace dyno {

struct LrSchedule {
  std::string kind = "constant";  // constant | cosine | onecycle
  double base_lr = 1e-3;
  int64_t total_steps = 1;
  double warmup_fraction = 0.05;  // cosine only; onecycle warms up over 30%

  double at(int64_t step) const;
};

// Scales the recipe LR for an effective batch: none, linear (x ratio) or sqrt (x sqrt(ratio)).
double scaled_lr(double base_lr, const std::string& rule, int64_t effective_batch, int64_t reference_batch);

}  // namespace dyno
