#include "dyno/suite/distributed/compression_hooks.h"

#include <torch/torch.h>

namespace dyno {

c10::intrusive_ptr<c10::ivalue::Future> CompressCommHook::runHook(c10d::GradBucket& bucket) {
  at::Tensor full = bucket.getBufferRef();
  std::vector<at::Tensor> wire = {full.div(state_->getSize()).to(wire_type_)};
  auto future = state_->allreduce(wire)->getFuture();
  return future->then(
      [full](c10::ivalue::Future& done) {
        auto reduced = done.value().toTensorVector()[0];
        at::Tensor out = full;  // the fp32 bucket: shares storage with the reducer's buffer
        out.copy_(reduced);
        return c10::IValue(out);
      },
      future->elementType());
}

}  // namespace dyno
