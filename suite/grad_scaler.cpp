#include "dyno/suite/grad_scaler.h"

#include <torch/torch.h>

namespace dyno {

GradScaler::GradScaler(GradScalerOptions options, c10::Device device) : options_(options) {
  const auto on = torch::TensorOptions().device(device);
  scale_ = torch::full({}, options.init_scale, on.dtype(torch::kFloat));
  growth_tracker_ = torch::zeros({}, on.dtype(torch::kInt));
  found_inf_ = torch::zeros({}, on.dtype(torch::kFloat));
  skipped_steps_ = torch::zeros({}, on.dtype(torch::kLong));
}

torch::Tensor GradScaler::scale_loss(const torch::Tensor& loss) const { return loss * scale_.to(loss.dtype()); }

torch::Tensor GradScaler::unscale(const std::vector<torch::Tensor>& parameters) {
  torch::NoGradGuard no_grad;
  found_inf_.zero_();
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  // The reciprocal in double, as torch.amp.GradScaler computes it.
  const auto inverse = scale_.to(torch::kDouble).reciprocal().to(torch::kFloat);
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inverse);
  return found_inf_;
}

void GradScaler::update(const torch::Tensor& found_inf) {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf, options_.growth_factor, options_.backoff_factor, options_.growth_interval);
  skipped_steps_.add_(found_inf.to(torch::kLong));
}

double GradScaler::scale() const { return scale_.item<double>(); }
int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int64_t>(); }
int64_t GradScaler::skipped_steps() const { return skipped_steps_.item<int64_t>(); }

void GradScaler::restore(double scale, int64_t growth_tracker) {
  scale_.fill_(scale);
  growth_tracker_.fill_(growth_tracker);
}

}  // namespace dyno
