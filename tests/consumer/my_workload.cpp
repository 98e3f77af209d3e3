// A workload dyno does not ship: a residual MLP on Fashion-MNIST, with its data built as C++
// tensors, its own loss, target and recipe. DYNO_MAIN() makes this binary the dyno command line.
#include <dyno/dyno.h>
#include <torch/torch.h>

#include "dyno/workloads/fashion_mnist.h"

namespace {

// x + MLP(x): a module of the user's own, used as one segment.
struct ResidualImpl : torch::nn::Module {
  explicit ResidualImpl(int64_t width)
      : mlp(register_module("mlp", torch::nn::Sequential(torch::nn::Linear(width, width), torch::nn::ReLU(), torch::nn::Linear(width, width)))) {}
  torch::Tensor forward(torch::Tensor x) { return torch::relu(x + mlp->forward(x)); }
  torch::nn::Sequential mlp;
};
TORCH_MODULE(Residual);

std::shared_ptr<dyno::TensorSource> fashion(const std::string& split, int64_t limit) {
  dyno::FashionMnistSplit data = dyno::load_fashion_mnist(split, limit);
  auto images = torch::from_blob(data.images.pixels.data(), {data.images.count, 784}, torch::kUInt8).to(torch::kFloat).div(255);
  auto labels = torch::from_blob(data.labels.data(), {static_cast<int64_t>(data.labels.size())}, torch::kUInt8);
  return std::make_shared<dyno::TensorSource>((images - dyno::kFashionMnistMean) / dyno::kFashionMnistStd, labels);
}

dyno::Workload residual_mlp() {
  dyno::Workload w;
  w.name = "fashion-resmlp";
  w.description = "residual MLP 784-128-[128-128]x2-10 on Fashion-MNIST (a user's workload)";
  w.data_description = "Fashion-MNIST as C++ tensors";
  w.metric_name = "accuracy";
  w.target = 0.85;
  w.target_note = "a plain MLP reaches 0.88";
  w.recipe.optimizer = "adamw";
  w.recipe.lr = 1e-3;
  w.recipe.schedule = "cosine";
  w.recipe.epochs = 5;
  w.load_data = [](const std::string& size) {
    const int64_t train = size == "tiny" ? 512 : size == "small" ? 6000 : 0, eval = size == "tiny" ? 256 : size == "small" ? 2000 : 0;
    return dyno::WorkloadData{fashion("train", train), fashion("t10k", eval)};
  };
  w.build_model = [] {  // three segments, so that activation checkpointing has places to cut
    dyno::SegmentedModel model;
    model->add_segment("stem", torch::nn::Sequential(torch::nn::Linear(784, 128), torch::nn::ReLU()));
    model->add_segment("blocks", torch::nn::Sequential(Residual(128), Residual(128)));
    model->add_segment("head", torch::nn::Sequential(torch::nn::Linear(128, 10)));
    return model;
  };
  w.loss = [](const torch::Tensor& logits, const torch::Tensor& labels) {
    return torch::nn::functional::cross_entropy(logits.to(torch::kFloat), labels);
  };
  return w;
}

}  // namespace

DYNO_WORKLOAD(residual_mlp);
DYNO_MAIN();
