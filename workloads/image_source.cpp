#include "dyno/workloads/image_source.h"

#include <torch/torch.h>

namespace dyno {

ImageSource::ImageSource(torch::Tensor images_uint8, torch::Tensor labels, double mean, double std)
    : images_(std::move(images_uint8)), labels_(std::move(labels)), mean_(mean), std_(std) {
  TORCH_INTERNAL_ASSERT(images_.size(0) == labels_.size(0), "this is a bug: images and labels differ in count");
}

int64_t ImageSource::size() const { return images_.size(0); }

Batch ImageSource::make_batch(const std::vector<int64_t>& indices) const {
  const auto index = torch::tensor(indices, torch::kLong);  // its own memory: a graph may keep it past this call
  Batch batch;
  // uint8 -> float in [0, 1] -> normalised; one fused pass would save a copy, two are clearer.
  batch.input = images_.index_select(0, index).to(torch::kFloat).div_(255.0).sub_(mean_).div_(std_);
  batch.target = labels_.index_select(0, index);
  batch.items = static_cast<int64_t>(indices.size());
  return batch;
}

}  // namespace dyno
