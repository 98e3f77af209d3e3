// The CUDA back end: compiled and linked in every build against a CUDA LibTorch (CPU machines
// and CI included); it only runs where a GPU is visible.
#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "dyno/reports/run_config.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/device_backend.h"
#include "dyno/suite/slowdown_controller.h"

namespace dyno {
namespace {

// Records a timing event on the current stream at each mark; collect() reads the intervals
// (cudaEventElapsedTime) after the engine has synchronised at a window's end.
class CudaPhaseClock : public PhaseClock {
 public:
  void start() override {
    if (!recording_) return;
    step_begins_.push_back(marks_.size());
    record("");
  }
  void mark(const std::string& phase) override {
    if (recording_ && !step_begins_.empty()) record(phase);
  }
  void collect() override {
    step_begins_.push_back(marks_.size());
    for (size_t s = 0; s + 1 < step_begins_.size(); ++s)
      for (size_t i = step_begins_[s] + 1; i < step_begins_[s + 1]; ++i)
        totals_s_[marks_[i]] += events_[i - 1].elapsed_time(events_[i]) / 1000.0;
    marks_.clear();
    step_begins_.clear();
  }

 private:
  void record(const std::string& phase) {
    if (events_.size() == marks_.size()) events_.emplace_back(cudaEventDefault);  // a pool, reused after collect()
    events_[marks_.size()].record();
    marks_.push_back(phase);
  }
  std::vector<at::cuda::CUDAEvent> events_;
  std::vector<std::string> marks_;
  std::vector<size_t> step_begins_;
};

class CudaBackend : public DeviceBackend {
 public:
  explicit CudaBackend(c10::DeviceIndex index) : index_(index) { c10::cuda::set_device(index_); }
  c10::Device device() const override { return c10::Device(c10::kCUDA, index_); }
  void synchronize() override { c10::cuda::device_synchronize(); }
  void reset_peak_memory() override { c10::cuda::CUDACachingAllocator::resetPeakStats(index_); }
  int64_t peak_memory_bytes() override {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index_);
    return stats.allocated_bytes[0].peak;  // StatType::AGGREGATE, whose namespace moved after LibTorch 2.4
  }
  std::string peak_memory_kind() const override { return "cuda_allocator"; }
  std::string device_name() override { return at::cuda::getDeviceProperties(index_)->name; }
  int64_t memory_capacity_bytes() override { return static_cast<int64_t>(at::cuda::getDeviceProperties(index_)->totalGlobalMem); }
  void apply_flags(const RunConfig& config) override {
    auto& context = at::globalContext();
    context.setBenchmarkCuDNN(config.cudnn_benchmark);
    context.setDeterministicCuDNN(config.deterministic);
    if (config.deterministic) {
      // cuBLAS is deterministic only with a fixed workspace, chosen before its first handle
      // exists (PyTorch's reproducibility notes); a user's own setting is kept.
      ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    }
    context.setDeterministicAlgorithms(config.deterministic, /*warn_only=*/false);
    // fp32 is PyTorch's default numerics: TF32 in cuDNN convolutions, full fp32 matmuls;
    // tf32=true adds TF32 matmuls (torch.backends.cuda.matmul.allow_tf32).
    context.setAllowTF32CuBLAS(config.tf32);
    context.setAllowTF32CuDNN(true);
  }
  std::unique_ptr<PhaseClock> make_phase_clock() override { return std::make_unique<CudaPhaseClock>(); }
  // The device and the host are delayed by one amount at one point (SlowdownController): the
  // spin is queued first, so that on an idle device it runs while the host busy-waits.
  void slow_down(double step_s, double fraction) override {
    if (!slowdown_) slowdown_.emplace(fraction);
    const double delay_s = slowdown_->delay_s(std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(), step_s);
    if (cycles_per_s_ == 0) cycles_per_s_ = measure_spin_rate();
    at::cuda::sleep(static_cast<int64_t>(delay_s * cycles_per_s_));
    busy_wait(delay_s);
  }

 private:
  // at::cuda::sleep's cycles per second on this GPU, timed with stream events (the clock the
  // kernel counts is the SM's, which boost moves away from the nominal rate).
  static double measure_spin_rate() {
    constexpr int64_t kCycles = 20'000'000;
    at::cuda::sleep(1000);  // the kernel's first launch (its loading) is not timed
    at::cuda::CUDAEvent begin(cudaEventDefault), end(cudaEventDefault);
    begin.record();
    at::cuda::sleep(kCycles);
    end.record();
    end.synchronize();
    return static_cast<double>(kCycles) / (begin.elapsed_time(end) / 1000.0);
  }
  c10::DeviceIndex index_;
  double cycles_per_s_ = 0;
  std::optional<SlowdownController> slowdown_;
};

void require_cuda() {
  if (!torch::cuda::is_available())
    throw UserError("device", "device=cuda but no CUDA device is visible (torch::cuda::is_available() is false); use device=cpu");
}

}  // namespace

bool cuda_backend_compiled() { return true; }

int64_t cuda_memory_capacity_bytes() {
  require_cuda();
  cudaDeviceProp properties{};
  C10_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));  // no context: cudaSetDevice would make one
  return static_cast<int64_t>(properties.totalGlobalMem);
}

std::unique_ptr<DeviceBackend> make_cuda_backend(const RunConfig& config, int64_t local_rank) {
  require_cuda();
  const auto gpus = static_cast<int64_t>(torch::cuda::device_count());
  // One visible GPU may be each rank's own, when a scheduler sets CUDA_VISIBLE_DEVICES per rank;
  // otherwise nccl ranks beyond the GPUs would share one.
  const bool own_gpu_each = gpus == 1 && std::getenv("CUDA_VISIBLE_DEVICES");
  if (local_rank >= gpus && !own_gpu_each && config.ddp.backend == "nccl")
    throw UserError("ddp", "LOCAL_RANK=" + std::to_string(local_rank) + " but only " + std::to_string(gpus) +
                               " GPU(s) are visible: nccl needs a GPU of its own for every rank on a machine; start at most " +
                               std::to_string(gpus) + " ranks per machine, or set ddp.backend=gloo");
  return std::make_unique<CudaBackend>(static_cast<c10::DeviceIndex>(local_rank % gpus));
}

}  // namespace dyno
