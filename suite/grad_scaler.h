// GradScaler: dynamic loss scaling for fp16 training, equivalent to torch.amp.GradScaler: the
// loss is multiplied by `scale` before backward; before the optimizer step the gradients are
// unscaled and checked; a step with an inf/NaN gradient is skipped and the scale backs off
// (x backoff_factor); after growth_interval clean steps in a row the scale grows (x growth_factor).
// The scale, the growth tracker and the found-inf flag are device tensors updated by PyTorch's
// own AMP kernels (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_), so a step
// needs no host sync; reading scale() or skipped_steps() syncs.
#pragma once

#include <cstdint>
#include <vector>

#include <c10/core/Device.h>
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
  explicit GradScaler(GradScalerOptions options = {}, c10::Device device = c10::Device(c10::kCPU));

  torch::Tensor scale_loss(const torch::Tensor& loss) const;
  // Divides every defined gradient by the scale in place; returns the found-inf flag (a float
  // scalar on the device, 1 when any gradient is inf or NaN) for the optimizer and update().
  torch::Tensor unscale(const std::vector<torch::Tensor>& parameters);
  // Records the outcome of one optimizer step (after unscale) and adjusts the scale.
  void update(const torch::Tensor& found_inf);

  double scale() const;
  int64_t growth_tracker() const;
  int64_t skipped_steps() const;
  void restore(double scale, int64_t growth_tracker);

 private:
  GradScalerOptions options_;
  torch::Tensor scale_;           // float32 scalar
  torch::Tensor growth_tracker_;  // int32 scalar
  torch::Tensor found_inf_;       // float32 scalar
  torch::Tensor skipped_steps_;   // int64 scalar
};

}  // namespace dyno
