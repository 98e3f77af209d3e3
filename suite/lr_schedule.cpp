#include "dyno/suite/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "dyno/reports/user_error.h"

namespace dyno {

double LrSchedule::at(int64_t step) const {
  const double total = static_cast<double>(std::max<int64_t>(total_steps, 1));
  const double t = std::min(static_cast<double>(step), total);
  if (kind == "constant") return base_lr;
  if (kind == "cosine") {
    const double warmup = std::max(1.0, std::floor(warmup_fraction * total));
    if (t < warmup) return base_lr * (t + 1) / warmup;
    const double progress = (t - warmup) / std::max(1.0, total - warmup);
    return base_lr * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  if (kind == "onecycle") {
    // Smith's one-cycle, as torch.optim.lr_scheduler.OneCycleLR (cosine annealing, start at
    // max/25, the peak at step 0.3 total - 1, the end, max/(25 * 1e4), at the last step, total - 1).
    // (A run of 3 steps or fewer peaks before its first step: it starts in the descent, as torch's.)
    const double up = 0.3 * total - 1.0, last = total - 1.0;
    const double start = base_lr / 25.0, end = start / 1e4;
    auto cosine = [](double from, double to, double pct) { return to + (from - to) / 2.0 * (std::cos(M_PI * pct) + 1.0); };
    if (t <= up && up > 0) return cosine(start, base_lr, t / up);
    return cosine(base_lr, end, std::min(1.0, (t - up) / std::max(1e-9, last - up)));
  }
  throw UserError("config", "schedule: '" + kind + "' is not one of constant, cosine, onecycle");
}

double scaled_lr(double base_lr, const std::string& rule, int64_t effective_batch, int64_t reference_batch) {
  const double ratio = static_cast<double>(effective_batch) / static_cast<double>(reference_batch);
  if (rule == "none") return base_lr;
  if (rule == "linear") return base_lr * ratio;
  if (rule == "sqrt") return base_lr * std::sqrt(ratio);
  throw UserError("config", "lr_scaling: '" + rule + "' is not one of none, linear, sqrt");
}

}  // namespace dyno
