// TokenSource: a character corpus cut into non-overlapping windows of seq_len + 1 tokens; example
// i is window i, and a batch's input is each window's first seq_len tokens, its target the next.
#pragma once

#include "dyno/workloads/example_source.h"

namespace dyno {

class TokenSource : public ExampleSource {
 public:
  TokenSource(torch::Tensor tokens_uint8, int64_t seq_len);
  int64_t size() const override;
  Batch make_batch(const std::vector<int64_t>& indices) const override;

 private:
  torch::Tensor tokens_;
  int64_t seq_len_;
};

}  // namespace dyno
