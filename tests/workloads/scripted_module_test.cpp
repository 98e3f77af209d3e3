// ScriptedModule: a model saved from Python with torch.jit.script, trained in C++ as in eager mode.
#include "dyno/workloads/scripted_module.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_files.h"
#include "dyno/suite/autocast_scope.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;
using testing::fixture;

// The scripted model's gradients on the batch Python used, in parameter order.
std::vector<torch::Tensor> scripted_gradients(const c10::Dict<c10::IValue, c10::IValue>& expected, bool bf16, torch::Tensor* loss_out) {
  auto inputs = expected.at("inputs").toTensor();
  SegmentedModel model = segment_script(load_trainable_script(fixture("model.pt")), inputs);
  model->train();
  torch::Tensor output;
  {
    AutocastScope autocast(torch::kCPU, bf16, torch::kBFloat16);
    output = model->forward(inputs);
  }
  auto loss = torch::nn::functional::cross_entropy(output.to(torch::kFloat), expected.at("targets").toTensor());
  loss.backward();
  *loss_out = loss.detach();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad());
  return grads;
}

TEST(ScriptedModule, GradientsEqualTheEagerModulesItCameFrom) {
  const auto expected = testing::saved_dict("grads.pt");
  for (const char* precision : {"fp32", "bf16"}) {
    const bool bf16 = std::string(precision) == "bf16";
    torch::Tensor loss;
    auto grads = scripted_gradients(expected, bf16, &loss);
    const auto eager_list = expected.at(std::string(precision) + "_grads").toList();
    std::vector<torch::Tensor> eager;
    for (size_t i = 0; i < eager_list.size(); ++i) eager.push_back(eager_list.get(i).toTensor());
    const auto names = expected.at("names").toList();
    ASSERT_EQ(grads.size(), eager.size()) << precision;
    // bf16: the same kernels in the same order under autocast; only summation order may differ.
    const double tolerance = bf16 ? 2e-2 : 1e-4;
    EXPECT_NEAR(loss.item<double>(), expected.at(std::string(precision) + "_loss").toTensor().item<double>(), tolerance) << precision;
    for (size_t i = 0; i < grads.size(); ++i) {
      ASSERT_EQ(grads[i].sizes(), eager[i].sizes()) << precision << " " << names.get(i).toStringRef();
      EXPECT_TRUE(torch::allclose(grads[i].to(torch::kFloat), eager[i], tolerance, tolerance * eager[i].abs().max().item<double>()))
          << precision << " " << names.get(i).toStringRef() << " differs by " << (grads[i] - eager[i]).abs().max().item<double>();
    }
  }
}

TEST(ScriptedModule, AChainIsSplitIntoItsChildrenAndATreeIsKeptWhole) {
  auto sample = torch::randn({2, 1, 28, 28});
  SegmentedModel chain = segment_script(load_trainable_script(fixture("model.pt")), sample);
  EXPECT_EQ(chain->segments().size(), 3u);
  SegmentedModel tree = segment_script(load_trainable_script(fixture("tree.pt")), sample);
  EXPECT_EQ(tree->segments().size(), 1u);
  // Telling it runs the model in training mode too, and leaves its buffers (batch norm's running
  // statistics) and the random numbers as they were.
  torch::jit::Module script = load_trainable_script(fixture("model.pt"));
  std::vector<torch::Tensor> buffers_before;
  for (const auto& b : script.buffers(true)) buffers_before.push_back(b.clone());
  torch::manual_seed(7);
  const auto expected_random = torch::rand({4});
  torch::manual_seed(7);
  segment_script(script, sample);
  EXPECT_TRUE(torch::equal(torch::rand({4}), expected_random));
  size_t i = 0;
  for (const auto& b : script.buffers(true)) EXPECT_TRUE(torch::equal(b, buffers_before[i++])) << i;
  // A forward that runs code of its own in training only is no chain, though eval mode matches.
  EXPECT_EQ(segment_script(load_trainable_script(fixture("training_only.pt")), sample)->segments().size(), 1u);
  EXPECT_EQ(tree->parameter_count(), 2 * (784 * 10 + 10));
  // The segments hold the script's own tensors: an update through one is seen by the other.
  torch::NoGradGuard no_grad;
  auto before = tree->forward(sample);
  for (auto& p : tree->parameters()) p.zero_();
  EXPECT_FALSE(torch::equal(before, tree->forward(sample)));
  EXPECT_TRUE(torch::equal(tree->forward(sample), torch::zeros({2, 10})));
}

TEST(ScriptedModule, TrainAndEvalReachTheScript) {
  auto sample = torch::randn({4, 1, 28, 28});
  SegmentedModel model = segment_script(load_trainable_script(fixture("model.pt")), sample);
  auto running_mean = [&] {
    for (const auto& b : model->named_buffers())
      if (b.key().find("running_mean") != std::string::npos) return b.value().clone();
    return torch::Tensor();
  };
  torch::NoGradGuard no_grad;
  model->eval();
  const auto frozen = running_mean();
  model->forward(sample);
  EXPECT_TRUE(torch::equal(frozen, running_mean()));  // evaluation: BatchNorm uses its statistics
  model->train();
  model->forward(sample);
  EXPECT_FALSE(torch::equal(frozen, running_mean()));  // training: it updates them
}

TEST(ScriptedModule, ModelsThatCannotBeTrainedAreRefusedWithTheFix) {
  EXPECT_EQ(error_of([] { load_trainable_script("/nonexistent/model.pt"); }),
            "[model] '/nonexistent/model.pt' does not exist or is not a file; save it with torch.jit.script(model).save(path)");
  EXPECT_NE(error_of([] { load_trainable_script(fixture("data.pt")); }).find("data.pt' is not a TorchScript model"), std::string::npos);
  EXPECT_NE(error_of([] { load_trainable_script(fixture("frozen.pt")); })
                .find("frozen.pt' was frozen (torch.jit.freeze or optimize_for_inference): its weights are constants and cannot be trained; "
                      "save torch.jit.script(model) before freezing"),
            std::string::npos);
  EXPECT_NE(error_of([] { load_trainable_script(fixture("no_grad.pt")); })
                .find("no_grad.pt' has no parameter that requires grad, so there is nothing to train"),
            std::string::npos);
}

}  // namespace
}  // namespace dyno
