#include "suite/grad_scaler.h"

#include <torch/torch.h>

namespace dyno {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {}

torch::Tensor GradScaler::scale_loss(const torch::Tensor& loss) const { return loss * scale_; }

bool GradScaler::unscale(const std::vector<torch::Tensor>& parameters) {
  // One reduction per gradient, one host sync for the whole set (as GradScaler.step does).
  const double inverse = 1.0 / scale_;
  std::vector<torch::Tensor> non_finite;
  for (const auto& p : parameters) {
    auto grad = p.grad();
    if (!grad.defined()) continue;
    non_finite.push_back(torch::logical_not(torch::isfinite(grad)).any());
    grad.mul_(inverse);
  }
  if (non_finite.empty()) return false;
  return torch::stack(non_finite).any().item<bool>();
}

void GradScaler::update(bool found_inf) {
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    ++skipped_steps_;
    return;
  }
  if (++growth_tracker_ >= options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
}

}  // namespace dyno
