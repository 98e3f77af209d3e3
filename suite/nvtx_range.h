// NVTX ranges in the "dyno" domain, with stable names: run, epoch, step, data_wait, h2d, forward,
// backward, optimizer, eval. Header-only NVTX3 from the CUDA toolkit: costs almost nothing when
// no tool (Nsight Systems, or an injection library via NVTX_INJECTION64_PATH) is attached; a build
// without it (a LibTorch without CUDA, no toolkit) makes no ranges.
#pragma once

namespace dyno {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace dyno
