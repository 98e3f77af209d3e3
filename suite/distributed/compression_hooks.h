// DDP communication hooks that really compress: the bucket is cast to fp16 or bf16 (halving the
// bytes all-reduced), divided by the world size first (no overflow), reduced, and cast back into
// the fp32 bucket; the same scheme as torch.distributed.algorithms.ddp_comm_hooks'
// fp16_compress_hook / bf16_compress_hook, written on c10d's C++ CommHookInterface.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>

namespace dyno {

class CompressCommHook : public c10d::CppCommHookInterface<c10::intrusive_ptr<c10d::ProcessGroup>> {
 public:
  CompressCommHook(const c10::intrusive_ptr<c10d::ProcessGroup>& group, c10::ScalarType wire_type)
      : c10d::CppCommHookInterface<c10::intrusive_ptr<c10d::ProcessGroup>>(group), wire_type_(wire_type) {}
  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override;

 private:
  c10::ScalarType wire_type_;
};

}  // namespace dyno
