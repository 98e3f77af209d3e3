// Built only against a CPU-only LibTorch: ddp.backend=nccl is then a clear error.
#include "dyno/reports/user_error.h"
#include "dyno/suite/distributed/nccl_backend.h"

namespace dyno {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int, int, std::chrono::milliseconds) {
  throw UserError("ddp", "ddp.backend=nccl but this dyno was built against a CPU-only LibTorch; use ddp.backend=gloo");
}

}  // namespace dyno
