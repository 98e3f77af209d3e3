#include "dyno/suite/activation_checkpoint.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_files.h"
#include "dyno/reports/run_config.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

struct Gradients {
  std::vector<torch::Tensor> grads;
  std::vector<torch::Tensor> buffers;
  torch::Tensor loss;
};

// A registered workload, or "torchscript": the scripted chain saved from Python.
Workload workload_named(const std::string& name) {
  RunConfig config;
  config.workload = name;
  if (name == "torchscript") {
    config.model_file = testing::fixture("model.pt");
    config.data_file = testing::fixture("data.pt");
  }
  return workload_for(config);
}

Gradients run(const std::string& workload, bool checkpointing) {
  const Workload w = workload_named(workload);
  torch::manual_seed(11);
  SegmentedModel model = w.build_model();
  model->train();  // dropout on: the recomputation must replay the same masks
  WorkloadData data = w.load_data("tiny");
  Batch batch = data.train->make_batch({0, 1, 2, 3, 4, 5, 6, 7});
  torch::manual_seed(99);
  torch::Tensor x = batch.input;
  const auto& segments = model->segments();
  for (size_t i = 0; i < segments.size(); ++i) {
    auto s = segments[i];
    x = checkpointing ? checkpointed_forward(s, x) : s->forward(x);
  }
  auto loss = torch::nn::functional::cross_entropy(x.reshape({-1, x.size(-1)}), batch.target.reshape({-1}));
  loss.backward();
  Gradients g;
  g.loss = loss.detach();
  for (const auto& p : model->parameters()) g.grads.push_back(p.grad().clone());
  for (const auto& b : model->buffers()) g.buffers.push_back(b.clone());
  return g;
}

class ActivationCheckpoint : public ::testing::TestWithParam<std::string> {};

TEST_P(ActivationCheckpoint, GradientsAndBuffersMatchThePlainRun) {
  torch::set_num_threads(1);  // same reduction order in both runs
  Gradients plain = run(GetParam(), false);
  Gradients checkpointed = run(GetParam(), true);
  EXPECT_TRUE(torch::equal(plain.loss, checkpointed.loss));
  ASSERT_EQ(plain.grads.size(), checkpointed.grads.size());
  for (size_t i = 0; i < plain.grads.size(); ++i)
    EXPECT_TRUE(torch::allclose(plain.grads[i], checkpointed.grads[i], /*rtol=*/1e-6, /*atol=*/1e-7))
        << GetParam() << " parameter " << i << " max diff " << (plain.grads[i] - checkpointed.grads[i]).abs().max().item<double>();
  // BatchNorm running statistics are updated once, not once more by the recomputation.
  for (size_t i = 0; i < plain.buffers.size(); ++i) EXPECT_TRUE(torch::equal(plain.buffers[i], checkpointed.buffers[i]));
}

INSTANTIATE_TEST_SUITE_P(Workloads, ActivationCheckpoint,
                         ::testing::Values("fashion-mlp", "fashion-cnn", "fashion-mobilenet", "text-transformer", "torchscript"));

TEST(ActivationCheckpointMemory, DoesNotKeepSegmentActivations) {
  // The checkpointed graph saves only each segment's input: its autograd graph has fewer nodes.
  torch::manual_seed(0);
  torch::nn::Sequential segment(torch::nn::Linear(8, 8), torch::nn::ReLU(), torch::nn::Linear(8, 8), torch::nn::ReLU());
  auto x = torch::randn({4, 8}, torch::requires_grad());
  auto plain = segment->forward(x);
  auto checkpointed = checkpointed_forward(segment, x);
  EXPECT_TRUE(torch::equal(plain, checkpointed));
  EXPECT_EQ(checkpointed.grad_fn()->next_edges().size(), 2u);  // the input and the anchor, not the layers
  EXPECT_EQ(checkpointed.grad_fn()->name().find("CheckpointFunction") != std::string::npos, true);
}

}  // namespace
}  // namespace dyno
