// DeviceBackend: what the engine needs from a device beyond tensors: synchronisation at measured
// boundaries, peak-memory figures, the device's name and its global flags. The CUDA back end
// (suite/cuda/) is built whenever LibTorch has CUDA, and only used when device=cuda.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "dyno/suite/phase_clock.h"

namespace dyno {

struct RunConfig;

// Spins on the host for `seconds` (a sleep would yield the core and be timed by the scheduler).
void busy_wait(double seconds);

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual c10::Device device() const = 0;
  virtual void synchronize() = 0;
  virtual void reset_peak_memory() = 0;
  virtual int64_t peak_memory_bytes() = 0;
  virtual std::string peak_memory_kind() const = 0;
  virtual std::string device_name() = 0;
  // The memory the device has in all (RAM on the CPU, the GPU's memory on CUDA), in bytes.
  virtual int64_t memory_capacity_bytes() = 0;
  // Applies cudnn_benchmark, tf32 and deterministic where the device has them.
  virtual void apply_flags(const RunConfig& config) = 0;
  // The clock for phase times: the host's wall clock on the CPU, stream events on CUDA.
  virtual std::unique_ptr<PhaseClock> make_phase_clock() = 0;
  // slowdown_percent's extra time after a step whose host side took `step_s`: `fraction` of it,
  // busy-waiting on the host (a host-bound step), and on CUDA also spinning on the device (a
  // device-bound step, where the host's time is the device's, waiting on a full queue, and a
  // host-side wait is hidden behind the queued work).
  virtual void slow_down(double step_s, double fraction) { busy_wait(step_s * fraction); }
};


// The backend of config.device; on CUDA the process's current device becomes GPU `local_rank`
// (modulo the GPUs visible, where ranks may share one: gloo). Throws UserError when the device is
// not available in this build or on this machine, and when nccl ranks outnumber the GPUs.
std::unique_ptr<DeviceBackend> make_device_backend(const RunConfig& config, int64_t local_rank = 0);

// The memory config.device has in all (DeviceBackend::memory_capacity_bytes), read without making
// a GPU the process's current device: that would give the process a CUDA context, which holds GPU
// memory for as long as it lives (the tuner's process, beside its trials).
int64_t device_memory_capacity_bytes(const RunConfig& config);

// Defined in suite/cuda/ (or suite/no_cuda/ for a CPU-only LibTorch).
std::unique_ptr<DeviceBackend> make_cuda_backend(const RunConfig& config, int64_t local_rank);
int64_t cuda_memory_capacity_bytes();  // GPU 0's
bool cuda_backend_compiled();

// Resident-set high-water mark of this process (VmHWM), in bytes.
int64_t resident_set_peak_bytes();
// This process's anonymous memory in transparent huge pages now (AnonHugePages of
// /proc/self/smaps_rollup), in bytes; 0 when none or not known.
int64_t host_huge_page_bytes();

}  // namespace dyno
