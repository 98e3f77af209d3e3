#include "dyno/workloads/scripted_module.h"

#include <filesystem>
#include <utility>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/torch.h>

#include "dyno/reports/user_error.h"
#include "dyno/workloads/saved_tensors.h"

namespace dyno {
namespace {

torch::Tensor run_script(torch::jit::Module& module, const torch::Tensor& x) {
  torch::jit::GraphOptimizerEnabledGuard eager_semantics(false);
  c10::IValue out = module.forward({x});
  if (!out.isTensor())
    throw UserError("model", "the scripted model's forward returned a " + out.type()->str() + "; dyno trains models whose forward returns one tensor");
  return out.toTensor();
}

bool has_trainable_parameter(const torch::jit::Module& module) {
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (p.requires_grad()) return true;
  return false;
}

}  // namespace

ScriptedModuleImpl::ScriptedModuleImpl(torch::jit::Module module) : script_(std::move(module)) {
  for (const auto& p : script_.named_parameters(/*recurse=*/false)) register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : script_.named_buffers(/*recurse=*/false)) register_buffer(b.name, b.value);
  for (const auto& child : script_.named_children()) register_module(child.name, ScriptedModule(child.value));
  torch::nn::Module::train(script_.is_training());
}

torch::Tensor ScriptedModuleImpl::forward(torch::Tensor x) { return run_script(script_, x); }

void ScriptedModuleImpl::train(bool on) {
  script_.train(on);
  torch::nn::Module::train(on);
}

torch::jit::Module load_trainable_script(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UserError("model", "'" + path + "' does not exist or is not a file; save it with torch.jit.script(model).save(path)");
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw UserError("model", "'" + path + "' is not a TorchScript model (torch.jit.script(model).save(path)): " + e.what_without_backtrace());
  } catch (const std::exception& e) {  // its code does not compile here (torch::jit::ErrorReport): an operator this LibTorch lacks
    throw UserError("model", "'" + path + "' cannot be loaded by this LibTorch (an operator it uses, such as torchvision's or a custom one, "
                             "is not registered here): " + std::string(e.what()).substr(0, 500));
  }
  require_whole_data(path, tensors_of(module), "model", "'" + path + "'");
  if (!module.hasattr("training"))
    throw UserError("model", "'" + path + "' was frozen (torch.jit.freeze or optimize_for_inference): its weights are constants and " +
                                 "cannot be trained; save torch.jit.script(model) before freezing");
  if (!has_trainable_parameter(module))
    throw UserError("model", "'" + path + "' has no parameter that requires grad, so there is nothing to train; script the model " +
                                 "with its parameters' requires_grad left True");
  if (!module.find_method("forward"))
    throw UserError("model", "'" + path + "' has no forward method");
  return module;
}

SegmentedModel segment_script(const torch::jit::Module& module, const torch::Tensor& sample_input) {
  SegmentedModel model;
  const auto children = module.named_children();
  const bool own_tensors = module.named_parameters(false).size() > 0 || module.named_buffers(false).size() > 0;
  bool chain = children.size() > 1 && !own_tensors;
  if (chain) {
    // The children run in a row give the forward's output in eval mode and in training mode, with
    // the same random numbers: code of the forward's own that runs only in training (dropout between
    // the children, a branch on self.training) makes it no chain. The buffers (batch norm's running
    // statistics), the random numbers and the mode are left as they were.
    torch::jit::Module whole = module;
    const bool was_training = whole.is_training();
    std::vector<std::pair<at::Tensor, at::Tensor>> buffers;
    torch::NoGradGuard no_grad;
    for (const auto& buffer : whole.buffers(true)) buffers.emplace_back(buffer, buffer.clone());
    auto generator = at::detail::getDefaultCPUGenerator();
    const auto random_state = generator.get_state();
    auto same_as_children = [&](bool training) {
      whole.train(training);
      generator.set_state(random_state);
      const auto expected = run_script(whole, sample_input);
      generator.set_state(random_state);
      auto x = sample_input;
      for (const auto& child : children) {
        torch::jit::Module c = child.value;
        x = run_script(c, x);
      }
      return x.sizes() == expected.sizes() && torch::allclose(x, expected, 1e-5, 1e-6);
    };
    try {
      chain = same_as_children(false) && same_as_children(true);
    } catch (const std::exception&) {
      chain = false;  // a child that is not tensor -> tensor: the forward is not a chain
    }
    whole.train(was_training);
    generator.set_state(random_state);
    for (auto& [buffer, saved] : buffers) buffer.copy_(saved);
  }
  if (chain) {
    for (const auto& child : children) model->add_segment(child.name, torch::nn::Sequential(ScriptedModule(child.value)));
  } else {
    model->add_segment("model", torch::nn::Sequential(ScriptedModule(module)));
  }
  return model;
}

}  // namespace dyno
