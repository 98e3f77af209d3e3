// TensorSource: a data set given as two tensors whose first dimension counts the examples:
// inputs and targets, built in C++ or read from a file that Python wrote with
// torch.save({"inputs": X, "targets": Y}, path). Floating tensors become float32 (autocast picks
// lower precision per op); integer tensors become int64 (class indices, token ids). A batch is
// an index_select of each; throughput counts examples.
#pragma once

#include <memory>
#include <string>

#include "dyno/workloads/example_source.h"

namespace dyno {

class TensorSource : public ExampleSource {
 public:
  // Throws UserError (naming `origin`) for tensors that are empty, of different lengths, or of a
  // type that is neither floating nor integer.
  TensorSource(torch::Tensor inputs, torch::Tensor targets, const std::string& origin = "tensors");
  // Reads the file's dictionary and takes its inputs_key and targets_key. Throws UserError naming
  // the file and the key: a missing or unreadable file, not torch.save's zip format, not a
  // dictionary, a missing key, a value that is not a tensor.
  static std::shared_ptr<TensorSource> from_file(const std::string& path, const std::string& inputs_key = "inputs",
                                                 const std::string& targets_key = "targets");

  int64_t size() const override;
  Batch make_batch(const std::vector<int64_t>& indices) const override;
  // Examples [begin, begin + count) as a new source sharing this one's memory.
  std::shared_ptr<TensorSource> slice(int64_t begin, int64_t count) const;
  const torch::Tensor& inputs() const { return inputs_; }
  const torch::Tensor& targets() const { return targets_; }

 private:
  torch::Tensor inputs_;
  torch::Tensor targets_;
};

}  // namespace dyno
