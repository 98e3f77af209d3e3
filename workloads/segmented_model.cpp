#include "dyno/workloads/segmented_model.h"

#include <torch/torch.h>

namespace dyno {

void SegmentedModelImpl::add_segment(const std::string& name, torch::nn::Sequential segment) {
  segments_.push_back(register_module(name, segment));
}

torch::Tensor SegmentedModelImpl::forward(torch::Tensor x) {
  for (auto& segment : segments_) x = segment->forward(x);
  return x;
}

int64_t SegmentedModelImpl::parameter_count() const {
  int64_t count = 0;
  for (const auto& p : parameters()) count += p.numel();
  return count;
}

}  // namespace dyno
