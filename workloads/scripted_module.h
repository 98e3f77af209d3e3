// ScriptedModule: a TorchScript module (torch.jit.script(model).save(path)) presented as a
// torch::nn::Module, so that the engine trains it like any other: its parameters and buffers are
// the script's own tensors (moving, saving, all-reducing and updating one updates the other), its
// children mirror the script's, and train()/eval() reach the script. forward runs the script with
// the graph executor's optimisation off on the calling thread, whichever thread that is (the
// training thread, a checkpoint's recomputation in backward), so that autocast and autograd
// behave as in eager mode.
#pragma once

#include <string>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <torch/script.h>

#include "dyno/workloads/segmented_model.h"

namespace dyno {

class ScriptedModuleImpl : public torch::nn::Module {
 public:
  explicit ScriptedModuleImpl(torch::jit::Module module);
  torch::Tensor forward(torch::Tensor x);
  void train(bool on = true) override;
  const torch::jit::Module& script() const { return script_; }

 private:
  torch::jit::Module script_;
};

TORCH_MODULE(ScriptedModule);

// Loads a scripted model for training. Throws UserError naming the file: missing, not TorchScript,
// frozen (torch.jit.freeze: its weights are constants), or without a parameter that requires grad.
torch::jit::Module load_trainable_script(const std::string& path);

// The model as segments: one per child when running the children in order gives the model's own
// output on `sample_input` (evaluation mode, no grad), so that activation checkpointing has
// somewhere to cut; otherwise one segment holding the whole model.
SegmentedModel segment_script(const torch::jit::Module& module, const torch::Tensor& sample_input);

}  // namespace dyno
