#include "dyno/workloads/models/mlp.h"

#include <torch/torch.h>

namespace dyno {

SegmentedModel make_mlp(int64_t inputs, const std::vector<int64_t>& hidden, int64_t classes) {
  namespace nn = torch::nn;
  SegmentedModel model;
  int64_t width = inputs;
  for (size_t i = 0; i < hidden.size(); ++i) {
    nn::Sequential layer;
    if (i == 0) layer->push_back(nn::Flatten());
    layer->push_back(nn::Linear(width, hidden[i]));
    layer->push_back(nn::ReLU());
    model->add_segment("hidden" + std::to_string(i), layer);
    width = hidden[i];
  }
  model->add_segment("head", nn::Sequential(nn::Linear(width, classes)));
  return model;
}

}  // namespace dyno
