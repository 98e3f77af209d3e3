#include "dyno/workloads/token_source.h"

#include <torch/torch.h>

namespace dyno {

TokenSource::TokenSource(torch::Tensor tokens_uint8, int64_t seq_len) : tokens_(std::move(tokens_uint8)), seq_len_(seq_len) {}

int64_t TokenSource::size() const { return std::max<int64_t>(0, (tokens_.numel() - 1) / seq_len_); }

Batch TokenSource::make_batch(const std::vector<int64_t>& indices) const {
  const int64_t n = static_cast<int64_t>(indices.size());
  auto windows = torch::empty({n, seq_len_ + 1}, torch::kUInt8);
  const uint8_t* src = tokens_.data_ptr<uint8_t>();
  uint8_t* dst = windows.data_ptr<uint8_t>();
  for (int64_t row = 0; row < n; ++row)
    std::memcpy(dst + row * (seq_len_ + 1), src + indices[static_cast<size_t>(row)] * seq_len_, static_cast<size_t>(seq_len_ + 1));
  auto as_long = windows.to(torch::kLong);
  Batch batch;
  batch.input = as_long.narrow(1, 0, seq_len_).contiguous();
  batch.target = as_long.narrow(1, 1, seq_len_).contiguous();
  batch.items = n * seq_len_;
  return batch;
}

}  // namespace dyno
