// SegmentedModel: a model written as an ordered list of segments (each a Sequential), so that the
// engine can checkpoint activations per segment and report per-segment parameter counts.
// forward() runs the segments in order; the engine may instead run them itself.
#pragma once

#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

namespace dyno {

class SegmentedModelImpl : public torch::nn::Module {
 public:
  void add_segment(const std::string& name, torch::nn::Sequential segment);
  torch::Tensor forward(torch::Tensor x);
  const std::vector<torch::nn::Sequential>& segments() const { return segments_; }
  int64_t parameter_count() const;

 private:
  std::vector<torch::nn::Sequential> segments_;
};

TORCH_MODULE(SegmentedModel);

}  // namespace dyno
