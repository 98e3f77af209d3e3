// DataLoader: produces the batches of one epoch in a fixed order. The order is a seeded shuffle of
// the example indices (a pure function of seed and epoch), sharded by rank for data parallelism.
// num_workers = 0 builds each batch in the training thread; num_workers = N starts N threads,
// worker w building batches w, w+N, ... into its own bounded queue of `prefetch` batches, and
// next() takes them round-robin, so the batches are exactly those of num_workers = 0.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dyno/workloads/example_source.h"

namespace dyno {

struct LoaderOptions {
  int64_t batch_size = 64;
  int64_t num_workers = 0;
  int64_t prefetch = 2;
  bool pin_memory = false;
  bool shuffle = true;
  // false: the last partial batch is kept, and the (size mod world_size) examples the ranks cannot
  // share evenly go one each to the first ranks (evaluation: every example once over the ranks).
  bool drop_last = true;
  uint64_t seed = 0;
  int64_t rank = 0;
  int64_t world_size = 1;
  double build_delay_ms = 0;  // each batch takes this much longer to build (testing: a slow source)
  // Names the source in the error when its make_batch throws: that is the workload's code, and its
  // error the user's (exit 2), at any batch of a run, from a worker thread or not.
  std::string source_name = "the example source";
};

class DataLoader {
 public:
  DataLoader(std::shared_ptr<const ExampleSource> source, LoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  int64_t batches_per_epoch() const;
  // Starts (or restarts) an epoch; first_batch > 0 skips batches already trained on (resume).
  void start_epoch(int64_t epoch, int64_t first_batch = 0);
  // The next batch of the epoch, or nullopt when it is over.
  std::optional<Batch> next();
  // The example indices of this rank for an epoch (exposed for tests).
  std::vector<int64_t> epoch_indices(int64_t epoch) const;

 private:
  // This rank's share of an epoch: size / world_size, and without drop_last one more for the first
  // (size mod world_size) ranks.
  int64_t examples_per_rank() const;
  struct WorkerQueue {
    std::mutex mutex;
    std::condition_variable changed;
    std::deque<Batch> ready;
    std::exception_ptr error;  // a failure while building a batch, rethrown by next()
  };

  Batch build(int64_t batch_index) const;
  void stop_workers();
  void worker_loop(int64_t worker);

  std::shared_ptr<const ExampleSource> source_;
  LoaderOptions options_;
  std::vector<int64_t> order_;
  int64_t next_batch_ = 0;
  int64_t first_batch_ = 0;
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<WorkerQueue>> queues_;
  std::vector<std::thread> workers_;
};

}  // namespace dyno
