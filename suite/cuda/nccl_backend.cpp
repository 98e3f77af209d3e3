// NCCL process group for CUDA tensors: compiled and linked in every build against the CUDA
// LibTorch; it runs only where GPUs exist.
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "dyno/suite/distributed/nccl_backend.h"

namespace dyno {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                     std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
}

}  // namespace dyno
