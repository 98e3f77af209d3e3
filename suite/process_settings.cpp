#include "dyno/suite/process_settings.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <ATen/ATen.h>

#include "dyno/reports/host_allocator_environment.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

constexpr const char* kPreloadedMarker = "DYNO_HOST_ALLOCATOR_PRELOADED";

bool tcmalloc_loaded() { return dlsym(RTLD_DEFAULT, "tc_malloc") != nullptr; }

}  // namespace

int64_t usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max<int64_t>(1, sysconf(_SC_NPROCESSORS_ONLN));
}

ThreadChoice choose_threads(int64_t configured, int64_t local_ranks, int64_t cores, const char* omp_num_threads) {
  ThreadChoice choice;
  local_ranks = std::max<int64_t>(local_ranks, 1);
  if (configured > 0) {
    choice.threads = configured;
  } else if (omp_num_threads && *omp_num_threads) {
    char* end = nullptr;
    const long v = std::strtol(omp_num_threads, &end, 10);
    if (*end == '\0' && v > 0) choice.threads = v;  // OpenMP reads it too; a bad value leaves LibTorch's default
    if (choice.threads == 0) return choice;
  } else if (local_ranks > 1) {
    choice.threads = std::max<int64_t>(1, cores / local_ranks);
  }
  if (choice.threads * local_ranks > cores)
    choice.warning = std::to_string(choice.threads) + " threads x " + std::to_string(local_ranks) + " rank" + (local_ranks > 1 ? "s" : "") +
                     " on this machine = " + std::to_string(choice.threads * local_ranks) + " threads on " + std::to_string(cores) +
                     " cores: the threads oversubscribe the cores and wait for each other" +
                     (local_ranks > 1 ? " (leave threads=0 to divide the cores among the ranks)" : "");
  return choice;
}

void load_host_allocator(const std::string& mode) {
  if (mode == "tcmalloc" && tcmalloc_loaded()) return;
  if (std::getenv(kPreloadedMarker)) return;  // already re-executed: apply_host_allocator says what is missing
  const std::vector<std::string> environment = host_allocator_start_environment(mode);
  if (environment.empty()) return;
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < all.size();) {
    const size_t end = all.find('\0', start);
    args.push_back(all.substr(start, end - start));
    start = end == std::string::npos ? all.size() : end + 1;
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (const auto& entry : environment) {
    const size_t eq = entry.find('=');
    setenv(entry.substr(0, eq).c_str(), entry.c_str() + eq + 1, 1);
  }
  setenv(kPreloadedMarker, mode.c_str(), 1);
  std::fflush(nullptr);
  execv("/proc/self/exe", argv.data());
  throw UserError("config", "host_allocator: " + mode + ": could not re-execute this program with " + environment.front());
}

void apply_host_allocator(const std::string& mode) {
  if (mode == "system") return;
  if (mode == "tcmalloc") {
    if (tcmalloc_loaded()) return;
    throw UserError("config", std::string("host_allocator: tcmalloc is not loaded in this process: install Debian's libtcmalloc-minimal4 (") +
                                  kTcmallocLibrary + "), and run through `dyno train`, which preloads it, or start the program with LD_PRELOAD=" +
                                  kTcmallocLibrary + "; or use host_allocator=hugepages");
  }
  if (mode != "retain" && mode != "hugepages")
    throw UserError("config", "host_allocator: '" + mode + "' is not one of system, retain, hugepages, tcmalloc");
#if defined(__GLIBC__)
  // M_MMAP_MAX 0: every block comes from the heap; M_TRIM_THRESHOLD: never give the top back.
  if (mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1) return;
  throw UserError("config", "host_allocator: " + mode + ": glibc's mallopt refused the settings; use host_allocator=system");
#else
  throw UserError("config", "host_allocator: " + mode + " needs glibc's malloc (mallopt); use host_allocator=system on this platform");
#endif
}

// The FTZ/DAZ bits live in each thread's MXCSR, and intra-op workers copy them from the thread
// that starts them. So the setting must precede the process's first parallel op; a probe (a
// parallel multiply of subnormals) checks that every thread flushes.
void apply_flush_denormal() {
  if (!at::globalContext().setFlushDenormal(true))
    throw UserError("config", "flush_denormal: true is not supported by this CPU (no FTZ/DAZ); set it to false");
  // The smallest subnormal, made from its bits (converting 1e-45 would itself be flushed) and
  // counted by its bits (a comparison with DAZ on would see zero).
  const auto subnormal = at::full({1 << 20}, 1, at::kInt).view(at::kFloat);
  if (const int64_t kept = (subnormal * 3.0f).view(at::kInt).count_nonzero().item<int64_t>(); kept != 0)
    throw UserError("config", "flush_denormal: true reached only some threads (" + std::to_string(kept) +
                                  " of 1048576 subnormal products kept): the intra-op threads started before it was set; set flush_denormal in the run's own config, which applies it before any parallel work");
}

}  // namespace dyno
