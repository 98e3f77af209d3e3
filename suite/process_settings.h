// Process-wide settings a run applies before its training loop: how malloc hands host memory to
// LibTorch's CPU tensors, and whether CPU math flushes subnormal floats to zero.
#pragma once

#include <cstdint>
#include <string>

namespace dyno {

// mode "system": the C library's defaults. glibc serves blocks above a moving threshold with mmap
// and returns freed memory to the kernel, so a step can map, fault in and unmap the same
// activation buffers every time; which blocks take that path depends on the process's allocation
// history (even on the length of its command line), so the same config's throughput differs from
// one process to the next by as much as a quarter (README, Knobs, has the measurement).
// mode "retain": no mmap for large blocks and no trimming, so freed memory is reused.
// mode "hugepages" (the default): retain, with glibc handing out its heaps in transparent huge
// pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, glibc >= 2.35; where the kernel's THP mode is
// "madvise", the common default, memory is otherwise in 4 KiB pages). Fewer processes take the
// slow mode that fashion-cnn's steps show on a shared machine (README, Knobs).
// mode "tcmalloc": Debian's libtcmalloc-minimal4 replaces malloc for the whole process.
// hugepages and tcmalloc need an environment from the process's start: load_host_allocator puts it
// in; here it is only checked where it can be (tcmalloc loaded).
void apply_host_allocator(const std::string& mode);

// For a program about to run a config with `mode` in this process: when the start environment
// above is missing (and, for tcmalloc, the library is not loaded), re-executes this program (same
// arguments, same pid) with it, and does not return; once only. Throws UserError naming the Debian
// package when the re-executed program still does not have tcmalloc (the library is not installed).
void load_host_allocator(const std::string& mode);

// How many intra-op threads a process runs with when it shares the machine's `cores` with
// `local_ranks` - 1 other ranks: `configured` (the threads knob) when > 0; else OMP_NUM_THREADS
// when the launcher or the user set it (`omp_num_threads`, null when unset); else the cores
// divided among the local ranks (at least 1), as torchrun does. 0 = LibTorch's own default (one
// process alone, nothing set). `warning` is set when the choice oversubscribes the cores.
struct ThreadChoice {
  int64_t threads = 0;
  std::string warning;
};
ThreadChoice choose_threads(int64_t configured, int64_t local_ranks, int64_t cores, const char* omp_num_threads);
// The CPUs this process may run on (its affinity mask: a container's or taskset's share).
int64_t usable_cores();

// Turns FTZ/DAZ on (torch.set_flush_denormal(True)) for the whole process: call it before the
// process's first parallel op (the intra-op threads inherit it when they start). It stays on.
// Throws UserError when a probe finds a thread that keeps subnormals.
void apply_flush_denormal();

}  // namespace dyno
