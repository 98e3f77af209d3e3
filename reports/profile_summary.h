// ProfileSummary: what LibTorch's profiler (Kineto) saw over a few profiled training steps, in a
// run report's "profile" field: an op table (every profiled event name within the profiled steps by
// self time: ATen ops, autograd nodes, dyno's phase ranges; on CUDA also the device kernels), the
// totals the bottleneck verdict reads, and two figures measured on the same machine after the
// run: the GEMM peak in the run's precision and the fixed cost of one ATen op call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct OpRow {
  std::string name;
  int64_t calls = 0;
  double self_s = 0;   // time in this event, less the events nested in it (host; device for kernels)
  double total_s = 0;  // time in this event, nested events included
  double flops = 0;    // floating-point operations (matrix multiplies and convolutions)
  std::string input_shapes;  // whose calls take the most time together (calls x median), e.g. "[[256, 784], [784, 512]]"
};

struct ProfileSummary {
  int64_t steps = 0;   // profiled steps (after warm-up; they are not part of the measured figures)
  double wall_s = 0;   // their wall time by dyno's clock, the device synchronised at each step's end
  std::string trace_path;   // Chrome trace JSON (chrome://tracing, https://ui.perfetto.dev)
  std::vector<OpRow> ops;      // host threads, within the profiled steps, by self time; past the top rows one "[other]" row
  std::vector<OpRow> kernels;  // device kernels by time (CUDA), same shape
  double ops_s = 0;          // inclusive time of the outermost ATen ops outside collectives (time inside any op)
  int64_t op_calls = 0;      // those ops' calls (each one's nested dispatches are in its measured call cost)
  double gemm_s = 0;         // inclusive time of the outermost matrix-multiply and convolution ops
  double gemm_flops = 0;     // their floating-point operations
  double convolution_flops = 0;  // of those, the convolutions' (which cuDNN runs in TF32 at fp32 numerics)
  double communication_s = 0;  // a collective in flight while the training thread is in no op (CUDA:
                               // NCCL kernels no compute kernel overlaps): communication not hidden
  double device_busy_s = 0;    // union of the device kernels' intervals; 0 on the CPU
  double gemm_device_s = 0;    // device time of matrix-multiply and convolution kernels (by name); 0 on the CPU
  double data_wait_s = 0;      // self time of dyno's data_wait ranges: the training thread waiting for a batch
  // Measured on the same machine after the run (suite/machine_peak.h).
  std::string peak_precision;  // float32, tf32, bfloat16 or float16
  double peak_flops_per_s = 0;       // FLOP/s of a large GEMM in that precision
  double op_call_s = 0;        // seconds per ATen op call on one-element tensors (add, mul_, addmm)

  // The sum of every row's self time: the profiled steps' time the table accounts for.
  double table_self_s() const;
};

// Rows past `keep` (by self time, descending) become one "[other]" row with their sums.
std::vector<OpRow> top_rows(std::vector<OpRow> rows, size_t keep);

nlohmann::json to_json(const ProfileSummary& profile);
// `where` names the object in errors ("'run.json': profile").
ProfileSummary profile_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace dyno
