#include "dyno/workloads/models/conv_net.h"

#include <torch/torch.h>

namespace dyno {

SegmentedModel make_conv_net(int64_t classes, bool conv_bias) {
  namespace nn = torch::nn;
  auto block = [&](int64_t in, int64_t out) {
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(conv_bias)), nn::BatchNorm2d(out),
                          nn::ReLU(), nn::MaxPool2d(2));
  };
  SegmentedModel model;
  model->add_segment("block1", block(1, 32));   // 28x28 -> 14x14
  model->add_segment("block2", block(32, 64));  // 14x14 -> 7x7
  model->add_segment("head", nn::Sequential(nn::Flatten(), nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Dropout(0.25),
                                            nn::Linear(128, classes)));
  return model;
}

}  // namespace dyno
