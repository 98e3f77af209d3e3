#include "dyno/workloads/models/mobile_net.h"

#include <torch/torch.h>

namespace dyno {
namespace {

namespace nn = torch::nn;

// Squeeze-excitation: rescales each channel by a gate computed from the global average.
class SqueezeExciteImpl : public nn::Module {
 public:
  SqueezeExciteImpl(int64_t channels, int64_t reduction)
      : reduce_(register_module("reduce", nn::Linear(channels, std::max<int64_t>(channels / reduction, 4)))),
        expand_(register_module("expand", nn::Linear(std::max<int64_t>(channels / reduction, 4), channels))) {}

  torch::Tensor forward(torch::Tensor x) {
    auto gate = x.mean({2, 3});
    gate = torch::sigmoid(expand_->forward(torch::relu(reduce_->forward(gate))));
    return x * gate.unsqueeze(-1).unsqueeze(-1);
  }

 private:
  nn::Linear reduce_;
  nn::Linear expand_;
};
TORCH_MODULE(SqueezeExcite);

class GlobalAveragePoolImpl : public nn::Module {
 public:
  torch::Tensor forward(torch::Tensor x) { return x.mean({2, 3}); }
};
TORCH_MODULE(GlobalAveragePool);

nn::Sequential separable_block(int64_t in, int64_t out, int64_t stride) {
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(in, in, 3).stride(stride).padding(1).groups(in).bias(false)), nn::BatchNorm2d(in),
      nn::ReLU(), nn::Conv2d(nn::Conv2dOptions(in, out, 1).bias(false)), nn::BatchNorm2d(out), nn::ReLU(),
      SqueezeExcite(out, 4));
}

}  // namespace

SegmentedModel make_mobile_net(int64_t classes) {
  SegmentedModel model;
  model->add_segment("stem", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1).bias(false)),
                                            nn::BatchNorm2d(32), nn::ReLU()));
  model->add_segment("stage1", separable_block(32, 64, 2));    // 28 -> 14
  model->add_segment("stage2", separable_block(64, 128, 2));   // 14 -> 7
  model->add_segment("stage3", separable_block(128, 128, 1));  // 7 -> 7
  model->add_segment("head", nn::Sequential(GlobalAveragePool(), nn::Dropout(0.2), nn::Linear(128, classes)));
  return model;
}

}  // namespace dyno
