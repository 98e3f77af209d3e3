#include "dyno/suite/machine_peak.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "dyno/reports/run_config.h"
#include "dyno/suite/device_backend.h"

namespace dyno {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

MachinePeak measure_machine_peak(DeviceBackend& backend, const RunConfig& config, bool convolutions_lead) {
  torch::NoGradGuard no_grad;
  const c10::Device device = backend.device();
  const bool cuda = device.is_cuda();
  MachinePeak peak;
  // The precision the run's GEMM FLOPs use: autocast's, else fp32 (TF32 on CUDA with tf32, or for
  // convolutions, which cuDNN runs in TF32 unless told otherwise).
  c10::ScalarType dtype = torch::kFloat;
  if (config.amp == "bf16") dtype = torch::kBFloat16, peak.precision = "bfloat16";
  else if (config.amp == "fp16") dtype = torch::kHalf, peak.precision = "float16";
  else peak.precision = cuda && (config.tf32 || convolutions_lead) ? "tf32" : "float32";
  // The GEMM below is a matrix multiply: TF32 for it is cuBLAS's flag, restored after.
  struct TensorCoreFlag {
    bool was = at::globalContext().allowTF32CuBLAS();
    explicit TensorCoreFlag(bool tf32) { at::globalContext().setAllowTF32CuBLAS(was || tf32); }
    ~TensorCoreFlag() { at::globalContext().setAllowTF32CuBLAS(was); }
  } tensor_cores(peak.precision == "tf32");

  // A square GEMM large enough to reach the hardware's rate: 2 n^3 FLOPs per product; the best of
  // a few repetitions after one warm-up.
  // (The run's model and optimizer state still hold memory: without room for the GEMM's three
  // matrices the peak stays 0, unmeasured, and the run stands.)
  const auto options = torch::TensorOptions().dtype(dtype).device(device);
  torch::Tensor product;
  try {
    const int64_t n = cuda ? 8192 : 1024;
    const auto a = torch::randn({n, n}, options), b = torch::randn({n, n}, options);
    product = torch::matmul(a, b);
    backend.synchronize();
    double best_s = 1e300;
    for (int repetition = 0; repetition < 10; ++repetition) {
      const auto start = Clock::now();
      product = torch::matmul(a, b);
      backend.synchronize();
      best_s = std::min(best_s, seconds_since(start));
    }
    peak.gemm_flops_per_s = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best_s;
  } catch (const c10::OutOfMemoryError&) {
    product = torch::Tensor();
  }

  // The fixed cost of an op call (dispatch, output allocation, kernel call or launch), whatever
  // its size: one-element calls of the kinds a training step is made of (out of place, in place,
  // a matrix multiply), per call.
  const auto x = torch::ones({1}, options), y = torch::ones({1, 1}, options);
  auto calls = [&] {
    product = torch::add(x, x);
    product.mul_(2);
    product = torch::addmm(x, y, y);
  };
  for (int i = 0; i < 100; ++i) calls();
  backend.synchronize();
  constexpr int kRounds = 1000;
  const auto start = Clock::now();
  for (int i = 0; i < kRounds; ++i) calls();
  backend.synchronize();
  peak.op_call_s = seconds_since(start) / (3 * kRounds);
  return peak;
}

}  // namespace dyno
