#include "suite/process_settings.h"

#include <climits>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <ATen/ATen.h>

#include "reports/user_error.h"

namespace dyno {

void apply_host_allocator(const std::string& mode) {
  if (mode == "system") return;
  if (mode != "retain") throw UserError("config", "host_allocator: '" + mode + "' is not one of system, retain");
#if defined(__GLIBC__)
  // M_MMAP_MAX 0: every block comes from the heap; M_TRIM_THRESHOLD: never give the top back.
  if (mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1) return;
  throw UserError("config", "host_allocator: retain: glibc's mallopt refused the settings; use host_allocator=system");
#else
  throw UserError("config", "host_allocator: retain needs glibc's malloc (mallopt); use host_allocator=system on this platform");
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
