// GradScaler: dynamic loss scaling for fp16 training, equivalent to torch.cuda.amp.GradScaler:
// the loss is multiplied by `scale` before backward; before the optimizer step the gradients are
// unscaled and checked; a step with an inf/NaN gradient is skipped and the scale backs off
// (x backoff_factor); after growth_interval clean steps in a row the scale grows (x growth_factor).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace dyno {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});

  torch::Tensor scale_loss(const torch::Tensor& loss) const;
  // Divides every defined gradient by the scale in place; returns true when any is inf or NaN.
  bool unscale(const std::vector<torch::Tensor>& parameters);
  // Records the outcome of one optimizer step (after unscale) and adjusts the scale.
  void update(bool found_inf);

  double scale() const { return scale_; }
  int64_t growth_tracker() const { return growth_tracker_; }
  int64_t skipped_steps() const { return skipped_steps_; }
  void restore(double scale, int64_t growth_tracker) {
    scale_ = scale;
    growth_tracker_ = growth_tracker;
  }

 private:
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
};

}  // namespace dyno
