// The CUDA back end: compiled and linked in every build against a CUDA LibTorch (CPU machines
// and CI included); it only runs where a GPU is visible.
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/cuda.h>

#include "reports/run_config.h"
#include "reports/user_error.h"
#include "suite/device_backend.h"

namespace dyno {
namespace {

class CudaBackend : public DeviceBackend {
 public:
  CudaBackend() : index_(c10::cuda::current_device()) {}
  c10::Device device() const override { return c10::Device(c10::kCUDA, index_); }
  void synchronize() override { c10::cuda::device_synchronize(); }
  void reset_peak_memory() override { c10::cuda::CUDACachingAllocator::resetPeakStats(index_); }
  int64_t peak_memory_bytes() override {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_);
    return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
  std::string peak_memory_kind() const override { return "cuda_allocator"; }
  std::string device_name() override { return at::cuda::getDeviceProperties(index_)->name; }
  int64_t memory_capacity_bytes() override { return static_cast<int64_t>(at::cuda::getDeviceProperties(index_)->totalGlobalMem); }
  void apply_flags(const RunConfig& config) override {
    auto& context = at::globalContext();
    context.setBenchmarkCuDNN(config.cudnn_benchmark);
    context.setDeterministicCuDNN(config.deterministic);
    context.setDeterministicAlgorithms(config.deterministic, /*warn_only=*/false);
    context.setAllowTF32CuBLAS(config.tf32);
    context.setAllowTF32CuDNN(config.tf32);
  }

 private:
  c10::DeviceIndex index_;
};

}  // namespace

bool cuda_backend_compiled() { return true; }

std::unique_ptr<DeviceBackend> make_cuda_backend() {
  if (!torch::cuda::is_available())
    throw UserError("device", "device=cuda but no CUDA device is visible (torch::cuda::is_available() is false); use device=cpu");
  return std::make_unique<CudaBackend>();
}

}  // namespace dyno
