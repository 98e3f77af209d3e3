// TrainingOptimizer: AdamW or SGD (momentum, weight decay) with three interchangeable step
// implementations, chosen by the `optimizer_impl` knob:
//   fused   one kernel over every parameter (at::_fused_adamw_ / at::_fused_sgd_; CPU and CUDA);
//           a skipped fp16 step is decided on the device from `found_inf`, with no host sync;
//   foreach the multi-tensor path of torch.optim (at::_foreach_* ops, a few kernels in all);
//   loop    LibTorch's torch::optim step, one parameter after another (the reference).
// The state (moments, momentum buffers, step counts) lives in a torch::optim optimizer whatever the
// implementation, so a training state saved under one resumes under another.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
struct AdamWParamState;
}

namespace dyno {

struct OptimizerSettings {
  std::string kind = "adamw";  // adamw | sgd
  std::string impl = "fused";  // fused | foreach | loop
  double lr = 1e-3;
  double momentum = 0.9;       // sgd
  double weight_decay = 0;
};

class TrainingOptimizer {
 public:
  TrainingOptimizer(std::vector<torch::Tensor> parameters, const OptimizerSettings& settings);
  ~TrainingOptimizer();
  TrainingOptimizer(TrainingOptimizer&&) noexcept;
  TrainingOptimizer& operator=(TrainingOptimizer&&) noexcept;

  void set_lr(double lr);
  // As torch.optim.Optimizer.zero_grad(set_to_none).
  void zero_grad(bool set_to_none);
  // One update from the current gradients. `found_inf` (a float scalar on the parameters' device,
  // or undefined) marks gradients with inf/NaN: the step is then skipped. The fused path decides
  // that on the device; foreach and loop read it on the host (as torch.optim does for them).
  void step(const torch::Tensor& found_inf = {});

  // The torch::optim optimizer that holds the state, for saving and loading. Call
  // `before_save()` first and `after_load()` after loading into it.
  torch::optim::Optimizer& state();
  void before_save();
  void after_load();

 private:
  // The parameters that have a gradient, with their gradients and state, as the kernels take them.
  struct StepTensors {
    std::vector<torch::Tensor> params, grads, first_moments, second_moments, buffers;
    std::vector<torch::optim::AdamWParamState*> adam_states;
  };
  void ensure_state();
  StepTensors gather();
  void fused_step(const torch::Tensor& found_inf);
  void foreach_step();

  OptimizerSettings settings_;
  std::vector<torch::Tensor> parameters_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  // The fused path's step count, one device tensor shared by every parameter (they step together).
  torch::Tensor step_count_;
};

// What trains, as torch's model.parameters() and DDP see it: each tensor once (LibTorch lists a
// tied weight under each of its names: it would be stepped, unscaled and clipped twice) and no
// frozen one (DDP's reducer cannot hook a tensor without a gradient).
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& model);

// Scales the gradients so that their global 2-norm is at most `max_norm`, as
// torch.nn.utils.clip_grad_norm_, without reading the norm on the host. Returns the norm (a
// device scalar).
torch::Tensor clip_grad_norm_on_device(const std::vector<torch::Tensor>& parameters, double max_norm);

}  // namespace dyno
