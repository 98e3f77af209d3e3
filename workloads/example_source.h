// ExampleSource: a data set held in memory that turns a list of example indices into a ready
// batch (decoded, normalised). make_batch is called from loader threads concurrently, so
// implementations keep no mutable state: the same indices always give the same batch.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace dyno {

struct Batch {
  torch::Tensor input;
  torch::Tensor target;
  int64_t items = 0;  // what throughput counts: samples for images, tokens for text
};

class ExampleSource {
 public:
  virtual ~ExampleSource() = default;
  virtual int64_t size() const = 0;
  virtual Batch make_batch(const std::vector<int64_t>& indices) const = 0;
};

}  // namespace dyno
