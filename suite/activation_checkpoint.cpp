#include "dyno/suite/activation_checkpoint.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

namespace dyno {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RngSnapshot {
  torch::Tensor cpu;
  torch::Tensor device;
  c10::Device device_kind = c10::Device(c10::kCPU);

  static RngSnapshot take(const c10::Device& device) {
    RngSnapshot s;
    s.device_kind = device;
    auto cpu = at::globalContext().defaultGenerator(c10::Device(c10::kCPU));
    {
      std::lock_guard<std::mutex> lock(cpu.mutex());
      s.cpu = cpu.get_state();
    }
    if (!device.is_cpu()) {
      auto gen = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(gen.mutex());
      s.device = gen.get_state();
    }
    return s;
  }

  void restore() const {
    auto cpu_gen = at::globalContext().defaultGenerator(c10::Device(c10::kCPU));
    {
      std::lock_guard<std::mutex> lock(cpu_gen.mutex());
      cpu_gen.set_state(cpu);
    }
    if (device.defined()) {
      auto gen = at::globalContext().defaultGenerator(device_kind);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(device);
    }
  }
};

// Restores the autocast state of the original forward during recomputation.
class AutocastState {
 public:
  explicit AutocastState(c10::DeviceType type)
      : type_(type), enabled_(at::autocast::is_autocast_enabled(type)), dtype_(at::autocast::get_autocast_dtype(type)) {}
  void apply_in_scope(const std::function<void()>& body) const {
    const bool was_enabled = at::autocast::is_autocast_enabled(type_);
    const auto was_dtype = at::autocast::get_autocast_dtype(type_);
    at::autocast::set_autocast_enabled(type_, enabled_);
    at::autocast::set_autocast_dtype(type_, dtype_);
    if (enabled_) at::autocast::increment_nesting();
    try {
      body();
    } catch (...) {
      restore(was_enabled, was_dtype);
      throw;
    }
    restore(was_enabled, was_dtype);
  }

 private:
  void restore(bool was_enabled, c10::ScalarType was_dtype) const {
    if (enabled_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(type_, was_enabled);
    at::autocast::set_autocast_dtype(type_, was_dtype);
  }
  c10::DeviceType type_;
  bool enabled_;
  c10::ScalarType dtype_;
};

struct SegmentState : torch::CustomClassHolder {
  SegmentState(torch::nn::Sequential s, RngSnapshot r, AutocastState a) : segment(std::move(s)), rng(std::move(r)), autocast(a) {}
  torch::nn::Sequential segment;
  RngSnapshot rng;
  AutocastState autocast;
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  // `anchor` requires grad so that the output is part of the graph even when the input is not
  // (the first segment's input is data).
  static variable_list forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor anchor,
                               c10::intrusive_ptr<SegmentState> state) {
    ctx->save_for_backward({input});
    auto output = state->segment->forward(input);
    ctx->saved_data["state"] = c10::IValue::make_capsule(std::move(state));
    return {output};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto holder = ctx->saved_data["state"].toCapsule();
    SegmentState& state = *static_cast<SegmentState*>(holder.get());
    auto input = ctx->get_saved_variables()[0];
    auto detached = input.detach();
    const bool differentiable = detached.is_floating_point();
    if (differentiable) detached.requires_grad_(true);

    // Recompute with the forward's RNG stream, then put the current stream back.
    const auto device = input.device();
    RngSnapshot current = RngSnapshot::take(device);
    std::vector<torch::Tensor> buffers_before;
    for (const auto& b : state.segment->buffers()) buffers_before.push_back(b.clone());
    torch::Tensor output;
    state.rng.restore();
    state.autocast.apply_in_scope([&] {
      torch::AutoGradMode enable_grad(true);
      output = state.segment->forward(detached);
    });
    current.restore();
    torch::autograd::backward({output}, {grad_outputs[0]});
    {
      // BatchNorm statistics were already updated by the first forward: undo the recomputation's
      // update. Only after backward, which reads the running stats it saved (version check).
      torch::NoGradGuard no_grad;
      auto buffers = state.segment->buffers();
      for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(buffers_before[i]);
    }
    return {differentiable ? detached.grad() : torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed_forward(torch::nn::Sequential& segment, const torch::Tensor& input) {
  static thread_local torch::Tensor anchor = torch::empty({0}, torch::requires_grad());
  auto state = c10::make_intrusive<SegmentState>(segment, RngSnapshot::take(input.device()), AutocastState(input.device().type()));
  return CheckpointFunction::apply(input, anchor, std::move(state))[0];
}

}  // namespace dyno
