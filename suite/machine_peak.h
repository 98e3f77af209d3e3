// MachinePeak: two figures of the machine a run ran on, measured after the run with the run's
// device, threads and precision, for the bottleneck verdict: the FLOP/s of a large GEMM (what the
// hardware can do: a run's matrix multiplies are compared with it) and the host time of one
// ATen op call on one-element tensors (the fixed cost every op pays, whatever its size).
#pragma once

#include <string>

namespace dyno {

class DeviceBackend;
struct RunConfig;

struct MachinePeak {
  std::string precision;  // float32, tf32, bfloat16 or float16: the precision the run's GEMM FLOPs mostly ran in
  double gemm_flops_per_s = 0;  // 0: not measured (no memory left for the GEMM beside the run)
  double op_call_s = 0;
};

// Takes about a second (ten GEMMs of 1024^2 on the CPU, 8192^2 on CUDA, and 3000 op calls).
// `convolutions_lead`: convolutions carry most of the run's GEMM FLOPs, which on CUDA run in TF32
// at fp32 numerics (cuDNN's default, as PyTorch's): the peak is then TF32's.
MachinePeak measure_machine_peak(DeviceBackend& backend, const RunConfig& config, bool convolutions_lead = false);

}  // namespace dyno
