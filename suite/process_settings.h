// Process-wide settings a run applies before its training loop: how malloc hands host memory to
// LibTorch's CPU tensors, and whether CPU math flushes subnormal floats to zero.
#pragma once

#include <string>

namespace dyno {

// mode "system": the C library's defaults. glibc serves blocks above a moving threshold with mmap
// and returns freed memory to the kernel, so a step can map, fault in and unmap the same
// activation buffers every time; which blocks take that path depends on the process's allocation
// history (even on the length of its command line), and the same fashion-cnn config (batch 256,
// bf16) ran at 4,500 or 5,900 samples/s from one process to the next.
// mode "retain": no mmap for large blocks and no trimming, so freed memory is reused.
void apply_host_allocator(const std::string& mode);

// Turns FTZ/DAZ on (torch.set_flush_denormal(True)) for the whole process: call it before the
// process's first parallel op (the intra-op threads inherit it when they start). It stays on.
// Throws UserError when a probe finds a thread that keeps subnormals.
void apply_flush_denormal();

}  // namespace dyno
