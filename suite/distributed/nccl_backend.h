// The NCCL backend for CUDA tensors: defined in suite/cuda/ (built in every CUDA build) or, for a
// CPU-only LibTorch, in suite/no_cuda/ where it is a clear error.
#pragma once

#include <chrono>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

namespace dyno {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                     std::chrono::milliseconds timeout);

}  // namespace dyno
