#include "dyno/suite/training_optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dyno/suite/lr_schedule.h"

namespace dyno {
namespace {

// Trains a small two-layer net for a few steps under one implementation, with the LR following a
// cosine schedule, and returns its parameters. The data and initial weights are the same for every call.
std::vector<torch::Tensor> train(const OptimizerSettings& settings, int steps, int skipped_step = -1, double clip = 0) {
  torch::manual_seed(3);
  auto net = torch::nn::Sequential(torch::nn::Linear(8, 16), torch::nn::ReLU(), torch::nn::Linear(16, 4));
  auto x = torch::randn({32, 8});
  auto y = torch::randint(0, 4, {32});
  TrainingOptimizer optimizer(net->parameters(), settings);
  LrSchedule schedule{"cosine", settings.lr, steps, 0.1};
  for (int step = 0; step < steps; ++step) {
    optimizer.set_lr(schedule.at(step));
    optimizer.zero_grad(true);
    torch::nn::functional::cross_entropy(net->forward(x), y).backward();
    if (clip > 0) clip_grad_norm_on_device(net->parameters(), clip);
    torch::Tensor found_inf;
    if (step == skipped_step) {
      net->parameters().front().mutable_grad()[0][0] = std::numeric_limits<float>::infinity();
      found_inf = torch::ones({});
    } else if (skipped_step >= 0) {
      found_inf = torch::zeros({});
    }
    optimizer.step(found_inf);
  }
  std::vector<torch::Tensor> out;
  for (const auto& p : net->parameters()) out.push_back(p.detach().clone());
  return out;
}

void expect_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(torch::allclose(a[i], b[i], /*rtol=*/1e-5, /*atol=*/1e-6)) << what << ": parameter " << i << " differs by "
                                                                           << (a[i] - b[i]).abs().max().item<double>();
}

class ImplementationsAgree : public ::testing::TestWithParam<std::string> {};

TEST_P(ImplementationsAgree, AdamWWithWeightDecayAndASchedule) {
  const OptimizerSettings loop{"adamw", "loop", 0.01, 0, 0.05};
  OptimizerSettings other = loop;
  other.impl = GetParam();
  const auto reference = train(loop, 12);
  expect_same(train(other, 12), reference, GetParam());
  // Training moved the parameters: implementations whose steps did nothing would also agree.
  EXPECT_FALSE(torch::allclose(train(loop, 1)[0], reference[0]));
}

TEST_P(ImplementationsAgree, SgdWithMomentumAndWeightDecay) {
  const OptimizerSettings loop{"sgd", "loop", 0.1, 0.9, 1e-3};
  OptimizerSettings other = loop;
  other.impl = GetParam();
  expect_same(train(other, 12), train(loop, 12), GetParam());
}

TEST_P(ImplementationsAgree, AStepWithNonFiniteGradientsIsSkipped) {
  for (const std::string kind : {"adamw", "sgd"}) {
    OptimizerSettings settings{kind, GetParam(), 0.01, 0.9, 0.01};
    // Skipping step 4 of 10 leaves the parameters where 9 clean steps would, apart from the
    // schedule's LR at each step: compare with the loop reference that skips the same step.
    OptimizerSettings loop = settings;
    loop.impl = "loop";
    const auto skipped = train(settings, 10, /*skipped_step=*/4);
    for (const auto& p : skipped) EXPECT_TRUE(torch::isfinite(p).all().item<bool>()) << kind;
    expect_same(skipped, train(loop, 10, 4), kind + " with a skipped step");
    EXPECT_FALSE(torch::allclose(skipped[0], train(settings, 10)[0])) << kind << ": the skip changed nothing";
  }
}

TEST_P(ImplementationsAgree, WithGradientClipping) {
  const OptimizerSettings loop{"adamw", "loop", 0.01, 0, 0.05};
  OptimizerSettings other = loop;
  other.impl = GetParam();
  expect_same(train(other, 8, -1, 0.05), train(loop, 8, -1, 0.05), GetParam());
}

INSTANTIATE_TEST_SUITE_P(TrainingOptimizer, ImplementationsAgree, ::testing::Values("fused", "foreach"));

TEST(TrainingOptimizer, SetToNoneLeavesGradientsUndefined) {
  auto w = torch::ones({2}, torch::requires_grad());
  TrainingOptimizer sgd({w}, {"sgd", "fused", 0.1, 0, 0});
  (w * 3).sum().backward();
  sgd.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(torch::equal(w.grad(), torch::zeros({2})));
  sgd.zero_grad(/*set_to_none=*/true);
  EXPECT_FALSE(w.grad().defined());
}

TEST(ClipGradNormOnDevice, EqualsLibTorchsClipGradNorm) {
  torch::manual_seed(1);
  auto a = torch::randn({5, 3}, torch::requires_grad());
  auto b = torch::randn({7}, torch::requires_grad());
  auto c = torch::randn({4}, torch::requires_grad());  // no gradient: ignored by both
  const auto grad_a = torch::randn({5, 3}) * 4, grad_b = torch::randn({7}) * 4;
  for (const double max_norm : {0.5, 1e6}) {
    a.mutable_grad() = grad_a.clone();
    b.mutable_grad() = grad_b.clone();
    const double expected_norm = torch::nn::utils::clip_grad_norm_(std::vector<torch::Tensor>{a, b, c}, max_norm);
    const auto expected_a = a.grad().clone(), expected_b = b.grad().clone();
    a.mutable_grad() = grad_a.clone();
    b.mutable_grad() = grad_b.clone();
    const auto norm = clip_grad_norm_on_device({a, b, c}, max_norm);
    EXPECT_NEAR(norm.item<double>(), expected_norm, 1e-4 * expected_norm);
    EXPECT_TRUE(torch::allclose(a.grad(), expected_a, 1e-5, 1e-6)) << max_norm;
    EXPECT_TRUE(torch::allclose(b.grad(), expected_b, 1e-5, 1e-6)) << max_norm;
    const bool clipped = a.grad().norm().item<double>() < grad_a.norm().item<double>();
    EXPECT_EQ(clipped, max_norm < expected_norm) << max_norm;
  }
}

TEST(TrainingOptimizer, AStateSavedUnderOneImplementationResumesUnderAnother) {
  torch::manual_seed(5);
  auto w = torch::randn({4}, torch::requires_grad());
  auto run = [&](const std::string& impl, torch::Tensor start, int steps, TrainingOptimizer* resume_from) {
    auto p = start.clone().requires_grad_(true);
    TrainingOptimizer optimizer({p}, {"adamw", impl, 0.1, 0, 0.01});
    if (resume_from) {
      resume_from->before_save();
      torch::serialize::OutputArchive out;
      resume_from->state().save(out);
      std::stringstream buffer;
      out.save_to(buffer);
      torch::serialize::InputArchive in;
      in.load_from(buffer);
      optimizer.state().load(in);
      optimizer.after_load();
    }
    for (int i = 0; i < steps; ++i) {
      optimizer.zero_grad(true);
      (p * p).sum().backward();
      optimizer.step();
    }
    return std::make_pair(p.detach().clone(), std::move(optimizer));
  };
  auto [straight, unused] = run("loop", w.detach(), 6, nullptr);
  auto [half, first] = run("fused", w.detach(), 3, nullptr);
  auto [resumed, second] = run("foreach", half, 3, &first);
  EXPECT_TRUE(torch::allclose(resumed, straight, 1e-5, 1e-6)) << (resumed - straight).abs().max().item<double>();
}

// An embedding whose weight is also the output layer's (weight tying), and a frozen output bias.
struct TiedNet : torch::nn::Module {
  TiedNet() {
    embedding = register_module("embedding", torch::nn::Embedding(10, 4));
    decoder_weight = register_parameter("decoder_weight", embedding->weight);
    decoder_bias = register_parameter("decoder_bias", torch::zeros({10}), /*requires_grad=*/false);
  }
  torch::Tensor forward(const torch::Tensor& tokens) { return torch::nn::functional::linear(embedding->forward(tokens), decoder_weight, decoder_bias); }
  torch::nn::Embedding embedding{nullptr};
  torch::Tensor decoder_weight, decoder_bias;
};

TEST(TrainableParameters, ATiedWeightTrainsOnceAndAFrozenOneNot) {
  torch::manual_seed(5);
  TiedNet net;
  ASSERT_EQ(net.parameters().size(), 3u);  // LibTorch lists the tied weight under both its names
  const auto trainable = trainable_parameters(net);
  ASSERT_EQ(trainable.size(), 1u);
  EXPECT_TRUE(trainable[0].is_same(net.embedding->weight));
  // One SGD step moves the tied weight by lr x its gradient, once.
  const auto tokens = torch::tensor({1, 2, 3}, torch::kLong);
  TrainingOptimizer optimizer(trainable, {"sgd", "foreach", 0.5, 0.0, 0.0});
  torch::nn::functional::cross_entropy(net.forward(tokens), tokens).backward();
  const auto expected = (net.embedding->weight - 0.5 * net.embedding->weight.grad()).detach();
  optimizer.step();
  EXPECT_TRUE(torch::allclose(net.embedding->weight, expected));
}

}  // namespace
}  // namespace dyno
