// DistributedContext: one rank of a data-parallel job on PyTorch's own distributed engine, c10d.
// Rendezvous through a c10d TCPStore from the standard environment (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR, MASTER_PORT; with TORCHELASTIC_USE_AGENT_STORE=True the elastic
// agent's store, as torchrun provides), so `torchrun --no-python dyno train ...`, `dyno launch`
// and cluster schedulers that set the same variables all work. Gloo for CPU tensors, NCCL for
// CUDA tensors (suite/cuda/nccl_process_group.cpp, compiled in every CUDA build).
// Gradients are averaged by c10d::Reducer, the engine under torch DistributedDataParallel:
// buckets in reverse parameter order, all-reduce launched asynchronously as each bucket fills
// during backward.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>

#include "dyno/reports/run_config.h"
#include "dyno/suite/distributed/shared_memory_all_reduce.h"

namespace c10d {
class ProcessGroup;
class Reducer;
class Store;
}  // namespace c10d

namespace dyno {

struct DistributedEnv {
  int64_t rank = 0;
  int64_t world_size = 1;
  int64_t local_rank = 0;
  // Ranks on this machine: LOCAL_WORLD_SIZE; unset, all of them when all_on_this_machine, else 0:
  // DistributedContext counts them at the rendezvous by host name.
  int64_t local_world_size = 1;
  // Known to share one machine: LOCAL_WORLD_SIZE equals WORLD_SIZE, or (unset) MASTER_ADDR is a
  // loopback address. A launcher that sets neither (srun) may span machines.
  bool all_on_this_machine = false;
  std::string master_addr;
  int64_t master_port = 0;
  bool agent_store = false;  // torchrun's elastic agent hosts the store
};

// nullopt when WORLD_SIZE is unset (a single-process run). Throws UserError naming the variable
// when the environment is incomplete or inconsistent.
std::optional<DistributedEnv> distributed_env_from_environment();
// Runs `collective` (a call that waits on the other ranks); a failure other than LibTorch's own
// errors (gloo's I/O errors: a peer died, its connection closed, a receive timed out) leaves as
// RankFailure, which the CLI tells from a bug.
void run_collective(const std::function<void()>& collective);

// The rank distributed_env_from_environment() reads (0 when WORLD_SIZE is unset): only rank 0 writes reports.
int64_t process_rank();

class DistributedContext {
 public:
  // Connects to the store and builds the process group; throws UserError naming the address,
  // port or world size when that fails (busy port, unreachable master, wrong world size). With
  // gloo_without_shared_memory (ddp.backend=auto chose shm), a shared-memory segment rank 0 cannot
  // create leaves the gradients to gloo, with a warning; otherwise it is a UserError.
  DistributedContext(const DistributedEnv& env, const RunConfig& config, const c10::Device& device, bool gloo_without_shared_memory = false);
  ~DistributedContext();

  int64_t rank() const { return env_.rank; }
  int64_t world_size() const { return env_.world_size; }
  // The ranks on this machine (DistributedEnv::local_world_size, counted when the launcher did not say).
  int64_t local_world_size() const { return env_.local_world_size; }
  // The backend that averages the gradients: the config's, or gloo where shm fell back to it.
  const std::string& backend() const { return config_.ddp.backend; }

  // Parameters and buffers from rank 0 to every rank (the DDP constructor's sync).
  void broadcast_module(torch::nn::Module& module);
  void broadcast_buffers(torch::nn::Module& module);
  // Builds the reducer over `parameters` (call once, after broadcast_module).
  void attach_reducer(const std::vector<torch::Tensor>& parameters);
  // Around one micro-batch whose gradients are to be synchronised (the last of an accumulation).
  void before_forward();
  void before_backward();
  // With ddp.overlap=false: all gradients in one flat all-reduce after backward, averaged.
  void after_backward(const std::vector<torch::Tensor>& parameters);
  // Abandons this rank's collectives in flight (it failed): NCCL's communicator is aborted, gloo
  // and shm have no abort. On every backend the peers wait until this process exits (the launcher
  // then stops them) or ddp.timeout_s.
  void abort();
  // True on every rank when it is true on any rank (stop decisions must be collective).
  bool any(bool flag);
  // The element-wise sum over the ranks of `values` (a collective), on every rank.
  std::vector<double> sum(const std::vector<double>& values);
  // On rank 0, every rank's JSON in rank order (the per-rank figures of the job's report); on the
  // others, none: they only send theirs, so none reads rank 0's store after rank 0 has closed it.
  std::vector<nlohmann::json> gather_json(const nlohmann::json& mine, const std::string& key);

 private:
  DistributedEnv env_;
  RunConfig config_;
  c10::Device device_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  std::unique_ptr<SharedMemoryAllReduce> shared_memory_;  // ddp.backend=shm (the reducer's hook uses it)
  std::shared_ptr<c10d::Reducer> reducer_;
  bool aborted_ = false;
};

}  // namespace dyno
