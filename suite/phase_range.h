// PhaseRange: marks one phase of a training step (step, data_wait, h2d, forward, backward,
// all_reduce, optimizer) for the tools that look at a run: always an NVTX range in the "dyno"
// domain (suite/nvtx_range.h), and, while the step is profiled, a user-scope RecordFunction
// "dyno::<phase>" that LibTorch's profiler records in its trace. Outside profiled steps no
// profiler state is touched.
#pragma once

#include <optional>

#include <ATen/record_function.h>

#include "dyno/suite/nvtx_range.h"

namespace dyno {

class PhaseRange {
 public:
  // `phase` must outlive the range (a string literal).
  PhaseRange(const char* phase, bool profiled);
  PhaseRange(const PhaseRange&) = delete;
  PhaseRange& operator=(const PhaseRange&) = delete;

 private:
  NvtxRange nvtx_;
  std::optional<at::RecordFunction> record_;
};

}  // namespace dyno
