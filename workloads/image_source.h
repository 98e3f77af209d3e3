// ImageSource: grey images kept as uint8 (N x 1 x H x W) with int64 labels; batches are gathered,
// converted to float and normalised with the data set's mean and standard deviation.
#pragma once

#include "dyno/workloads/example_source.h"

namespace dyno {

class ImageSource : public ExampleSource {
 public:
  ImageSource(torch::Tensor images_uint8, torch::Tensor labels, double mean, double std);
  int64_t size() const override;
  Batch make_batch(const std::vector<int64_t>& indices) const override;
  const torch::Tensor& images() const { return images_; }
  const torch::Tensor& labels() const { return labels_; }

 private:
  torch::Tensor images_;
  torch::Tensor labels_;
  double mean_;
  double std_;
};

}  // namespace dyno
