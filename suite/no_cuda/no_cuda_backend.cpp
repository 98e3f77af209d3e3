// Built only against a CPU-only LibTorch that a user brings: device=cuda is then a clear error.
#include "dyno/reports/user_error.h"
#include "dyno/suite/device_backend.h"

namespace dyno {
namespace {

[[noreturn]] void no_cuda() {
  throw UserError("device", "device=cuda but this dyno was built against a CPU-only LibTorch; rebuild with a CUDA LibTorch");
}

}  // namespace

bool cuda_backend_compiled() { return false; }

int64_t cuda_memory_capacity_bytes() { no_cuda(); }

std::unique_ptr<DeviceBackend> make_cuda_backend(const RunConfig&, int64_t) { no_cuda(); }

}  // namespace dyno
