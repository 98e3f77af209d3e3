// StepProfiler: LibTorch's own profiler (Kineto) over a few training steps. Set up when the run
// starts (so that nothing is initialised inside the profiled steps), started before the first
// profiled step and stopped after the last; stop() writes the Chrome trace (atomically) and
// summarises the events: the op table by self time, the time inside ATen ops, the matrix
// multiplies' and convolutions' time and FLOPs, collectives, and on CUDA the device's kernels.
#pragma once

#include <cstdint>
#include <string>

#include <c10/core/Device.h>

#include "dyno/reports/profile_summary.h"
#include "dyno/suite/engine.h"

namespace dyno {

class StepProfiler {
 public:
  StepProfiler(ProfileOptions options, c10::Device device);
  ~StepProfiler();  // stops a profile still running (the run failed), keeping nothing
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;

  void start();
  bool running() const { return running_; }
  // `wall_s`: the profiled steps' wall time by the run's clock; `steps`: how many there were.
  ProfileSummary stop(double wall_s, int64_t steps);
  const ProfileOptions& options() const { return options_; }

 private:
  ProfileOptions options_;
  c10::Device device_;
  bool running_ = false;
};

}  // namespace dyno
