#include "dyno/suite/training_optimizer.h"

#include <cmath>
#include <set>

#include <torch/torch.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

using torch::optim::AdamW;
using torch::optim::AdamWOptions;
using torch::optim::AdamWParamState;
using torch::optim::SGD;
using torch::optim::SGDOptions;
using torch::optim::SGDParamState;

void* key_of(const torch::Tensor& p) { return p.unsafeGetTensorImpl(); }

bool skipped_on_host(const torch::Tensor& found_inf) { return found_inf.defined() && found_inf.item<float>() != 0; }

}  // namespace

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& model) {
  std::vector<torch::Tensor> trainable;
  std::set<const c10::TensorImpl*> seen;
  for (const auto& p : model.parameters())
    if (p.requires_grad() && seen.insert(p.unsafeGetTensorImpl()).second) trainable.push_back(p);
  return trainable;
}

TrainingOptimizer::TrainingOptimizer(std::vector<torch::Tensor> parameters, const OptimizerSettings& settings)
    : settings_(settings), parameters_(std::move(parameters)) {
  if (settings_.impl != "fused" && settings_.impl != "foreach" && settings_.impl != "loop")
    throw UserError("config", "optimizer_impl: '" + settings_.impl + "' is not one of fused, foreach, loop");
  if (settings_.kind == "sgd")
    optimizer_ = std::make_unique<SGD>(parameters_, SGDOptions(settings_.lr).momentum(settings_.momentum).weight_decay(settings_.weight_decay));
  else if (settings_.kind == "adamw")
    optimizer_ = std::make_unique<AdamW>(parameters_, AdamWOptions(settings_.lr).weight_decay(settings_.weight_decay));
  else
    throw UserError("config", "optimizer: '" + settings_.kind + "' is not one of sgd, adamw");
}

TrainingOptimizer::~TrainingOptimizer() = default;
TrainingOptimizer::TrainingOptimizer(TrainingOptimizer&&) noexcept = default;
TrainingOptimizer& TrainingOptimizer::operator=(TrainingOptimizer&&) noexcept = default;

torch::optim::Optimizer& TrainingOptimizer::state() { return *optimizer_; }

void TrainingOptimizer::set_lr(double lr) {
  settings_.lr = lr;
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
}

void TrainingOptimizer::zero_grad(bool set_to_none) {
  // A gradient that is a view (DDP's gradient_as_bucket_view) cannot be detached in place, so
  // only one with a grad_fn is detached; the rest stop requiring grad (as torch.optim does).
  for (auto& p : parameters_) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad().reset();
      continue;
    }
    auto& grad = p.mutable_grad();
    if (grad.grad_fn()) grad = grad.detach();
    else grad.requires_grad_(false);
    grad.zero_();
  }
}

// Creates the state torch::optim would create at its first step (zero moments, zero momentum
// buffers), so that the fused and foreach paths update the same tensors the loop path would.
// A zero SGD momentum buffer updated with dampening 0 equals torch's first-step clone of the gradient.
void TrainingOptimizer::ensure_state() {
  auto& state = optimizer_->state();
  for (const auto& p : parameters_) {
    if (state.count(key_of(p))) continue;
    if (settings_.kind == "adamw") {
      auto s = std::make_unique<AdamWParamState>();
      s->step(0);
      s->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
      s->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
      state[key_of(p)] = std::move(s);
    } else if (settings_.momentum != 0) {
      auto s = std::make_unique<SGDParamState>();
      s->momentum_buffer(torch::zeros_like(p, at::MemoryFormat::Preserve));
      state[key_of(p)] = std::move(s);
    }
  }
  if (settings_.kind == "adamw" && !step_count_.defined() && !parameters_.empty()) {
    const auto& first = static_cast<AdamWParamState&>(*state.at(key_of(parameters_.front())));
    step_count_ = torch::full({}, static_cast<double>(first.step()), parameters_.front().options().dtype(torch::kFloat));
  }
}

TrainingOptimizer::StepTensors TrainingOptimizer::gather() {
  ensure_state();
  StepTensors t;
  auto& state = optimizer_->state();
  for (const auto& p : parameters_) {
    if (!p.grad().defined()) continue;
    t.params.push_back(p);
    t.grads.push_back(p.grad());
    if (settings_.kind == "adamw") {
      auto* s = static_cast<AdamWParamState*>(state.at(key_of(p)).get());
      t.adam_states.push_back(s);
      t.first_moments.push_back(s->exp_avg());
      t.second_moments.push_back(s->exp_avg_sq());
    } else if (settings_.momentum != 0) {
      t.buffers.push_back(static_cast<SGDParamState&>(*state.at(key_of(p))).momentum_buffer());
    }
  }
  return t;
}

void TrainingOptimizer::step(const torch::Tensor& found_inf) {
  if (settings_.impl == "fused") return fused_step(found_inf);
  if (skipped_on_host(found_inf)) return;
  if (settings_.impl == "loop") {
    optimizer_->step();
    return;
  }
  foreach_step();
}

void TrainingOptimizer::fused_step(const torch::Tensor& found_inf) {
  auto [params, grads, first_moments, second_moments, buffers, adam_states] = gather();
  if (params.empty()) return;
  const std::optional<torch::Tensor> inf = found_inf.defined() ? std::optional<torch::Tensor>(found_inf) : std::nullopt;
  if (settings_.kind == "sgd") {
    at::_fused_sgd_(params, grads, buffers, settings_.weight_decay, settings_.momentum, settings_.lr, /*dampening=*/0,
                    /*nesterov=*/false, /*maximize=*/false, /*is_first_step=*/false, std::nullopt, inf);
    return;
  }
  const auto& options = static_cast<const AdamWOptions&>(optimizer_->param_groups().front().options());
  // The kernel reads the step count for its bias corrections; like torch.optim's fused AdamW, the
  // count is advanced before it and taken back where the step was skipped.
  step_count_.add_(1);
  const std::vector<torch::Tensor> steps(params.size(), step_count_);
  at::_fused_adamw_(params, grads, first_moments, second_moments, {}, steps, settings_.lr, std::get<0>(options.betas()),
                    std::get<1>(options.betas()), options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false,
                    std::nullopt, inf);
  if (found_inf.defined()) step_count_.sub_(found_inf.to(step_count_.dtype()));
}

// torch.optim's _multi_tensor_adamw and _multi_tensor_sgd (not capturable, no amsgrad).
void TrainingOptimizer::foreach_step() {
  torch::NoGradGuard no_grad;
  auto [params, grads, first_moments, second_moments, buffers, adam_states] = gather();
  if (params.empty()) return;
  if (settings_.kind == "sgd") {
    auto updates = settings_.weight_decay != 0 ? at::_foreach_add(grads, params, settings_.weight_decay) : grads;
    if (settings_.momentum != 0) {
      at::_foreach_mul_(buffers, settings_.momentum);
      at::_foreach_add_(buffers, updates, 1.0);
      updates = buffers;
    }
    at::_foreach_add_(params, updates, -settings_.lr);
    return;
  }
  const auto& options = static_cast<const AdamWOptions&>(optimizer_->param_groups().front().options());
  const auto [beta1, beta2] = options.betas();
  const int64_t step = adam_states.front()->step() + 1;
  for (auto* s : adam_states) s->step(step);
  if (step_count_.defined()) step_count_.fill_(static_cast<double>(step));
  if (options.weight_decay() != 0) at::_foreach_mul_(params, 1.0 - settings_.lr * options.weight_decay());
  at::_foreach_lerp_(first_moments, grads, 1.0 - beta1);
  at::_foreach_mul_(second_moments, beta2);
  at::_foreach_addcmul_(second_moments, grads, grads, 1.0 - beta2);
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(beta2, static_cast<double>(step)));
  auto denominators = at::_foreach_sqrt(second_moments);
  at::_foreach_div_(denominators, bias_correction2_sqrt);
  at::_foreach_add_(denominators, options.eps());
  at::_foreach_addcdiv_(params, first_moments, denominators, -settings_.lr / bias_correction1);
}

void TrainingOptimizer::before_save() {
  if (!step_count_.defined()) return;
  const auto step = static_cast<int64_t>(std::llround(step_count_.item<double>()));
  for (auto& [key, s] : optimizer_->state()) static_cast<AdamWParamState&>(*s).step(step);
}

void TrainingOptimizer::after_load() { step_count_ = torch::Tensor(); }

torch::Tensor clip_grad_norm_on_device(const std::vector<torch::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return torch::zeros({});
  auto norm = at::linalg_vector_norm(at::stack(at::_foreach_norm(grads, 2)), 2);
  // As clip_grad_norm_: the factor max_norm / (norm + 1e-6), clamped to 1, multiplies every gradient.
  auto factor = (max_norm / (norm + 1e-6)).clamp_max(1.0);
  at::_foreach_mul_(grads, factor);
  return norm;
}

}  // namespace dyno
