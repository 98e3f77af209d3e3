// SharedMemoryAllReduce: the gradient all-reduce of data-parallel ranks that all run on one
// machine, through a shared-memory segment instead of Gloo's TCP on loopback, whose every message
// wakes a transport thread and a worker thread in each process (scripts/bench-ddp compares them).
//
// Each call copies the rank's buffer into its slot of the segment, waits for every rank, sums one
// 1/N share of the slots (each element is summed by one rank, in rank order, so every rank ends
// with the same bits), waits, gathers the other shares, and waits again before the slots are
// reused. Buffers larger than a slot go through in slot-sized chunks. Waiting spins briefly, then
// yields the core (ranks may outnumber the cores), and gives up after the job's ddp.timeout_s.
// Rank 0 creates the segment (its pages reserved) and names it in the store; the name is removed
// once every rank has mapped it, or when setting up fails, so nothing outlives the job. When rank 0
// cannot create it (a full or small /dev/shm), it gives the reason instead, and every rank throws
// SharedMemoryUnavailable: the job can go on with gloo, together.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/torch.h>

namespace dyno {

// Thrown alike on every rank when rank 0 could not create the segment; what() says why.
class SharedMemoryUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SharedMemoryAllReduce {
 public:
  // Collective: every rank of the job constructs it.
  SharedMemoryAllReduce(c10d::Store& store, int rank, int world_size, std::chrono::milliseconds timeout);
  ~SharedMemoryAllReduce();
  SharedMemoryAllReduce(const SharedMemoryAllReduce&) = delete;
  SharedMemoryAllReduce& operator=(const SharedMemoryAllReduce&) = delete;

  // Replaces `tensor` (on the CPU) with its mean over the ranks.
  void average(at::Tensor& tensor);
  // A DDP communication hook (c10d::Reducer) that averages each bucket with average().
  std::unique_ptr<c10d::CommHookInterface> comm_hook();

 private:
  void wait_for_all();
  float* slot(int rank) const;

  int rank_, world_size_;
  std::chrono::milliseconds timeout_;
  size_t bytes_ = 0;
  void* segment_ = nullptr;
  uint64_t generation_ = 0;
};

}  // namespace dyno
