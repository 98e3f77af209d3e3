// The environment a process needs from its start for a host_allocator mode: a preloaded malloc
// or a glibc tunable, which cannot be set once the process runs. Torch-free, so that a tuner can
// start its trials with it (no re-execution) and `dyno train` can re-execute itself with it.
#pragma once

#include <string>
#include <vector>

namespace dyno {

// Debian's libtcmalloc-minimal4, the library host_allocator=tcmalloc preloads.
inline constexpr const char* kTcmallocLibrary = "libtcmalloc_minimal.so.4";

// The "NAME=value" entries a process must start with for host allocator `mode`, given the
// LD_PRELOAD and GLIBC_TUNABLES it would inherit (null when unset) and the kernel's THP mode
// (/sys/kernel/mm/transparent_hugepage/enabled, e.g. "always [madvise] never"); an inherited value
// is kept after dyno's. Empty when nothing is missing: hugepages where THP is not "madvise" ("always"
// gives huge pages anyway, "never" none) or where GLIBC_TUNABLES already sets glibc.malloc.hugetlb.
std::vector<std::string> host_allocator_start_environment(const std::string& mode, const char* ld_preload, const char* glibc_tunables,
                                                          const std::string& thp_enabled);
// The same for this process's own environment and kernel: what a child that runs `mode` needs.
std::vector<std::string> host_allocator_start_environment(const std::string& mode);

}  // namespace dyno
