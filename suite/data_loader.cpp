#include "dyno/suite/data_loader.h"

#include <torch/torch.h>

#include <chrono>
#include <numeric>
#include <random>

#include "dyno/workloads/workload_registry.h"

namespace dyno {

DataLoader::DataLoader(std::shared_ptr<const ExampleSource> source, LoaderOptions options)
    : source_(std::move(source)), options_(options) {}

DataLoader::~DataLoader() { stop_workers(); }

int64_t DataLoader::examples_per_rank() const {
  return source_->size() / options_.world_size + (!options_.drop_last && options_.rank < source_->size() % options_.world_size);
}

int64_t DataLoader::batches_per_epoch() const {
  const int64_t per_rank = examples_per_rank();
  return options_.drop_last ? per_rank / options_.batch_size : (per_rank + options_.batch_size - 1) / options_.batch_size;
}

std::vector<int64_t> DataLoader::epoch_indices(int64_t epoch) const {
  std::vector<int64_t> all(static_cast<size_t>(source_->size()));
  std::iota(all.begin(), all.end(), 0);
  if (options_.shuffle) {
    // A pure function of (seed, epoch), identical on every rank: the distributed-sampler contract.
    std::mt19937_64 rng(options_.seed * 1000003ULL + static_cast<uint64_t>(epoch) * 7919ULL + 17ULL);
    for (size_t i = all.size() - 1; i > 0; --i) std::swap(all[i], all[std::uniform_int_distribution<size_t>(0, i)(rng)]);
  }
  // Shard by rank: rank r takes positions r, r + W, r + 2W, ... of the first (size / W) * W, and
  // without drop_last position (size / W) * W + r when there is one.
  std::vector<int64_t> mine(static_cast<size_t>(examples_per_rank()));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = all[i * static_cast<size_t>(options_.world_size) + static_cast<size_t>(options_.rank)];
  return mine;
}

Batch DataLoader::build(int64_t batch_index) const {
  const int64_t begin = batch_index * options_.batch_size;
  const int64_t end = std::min<int64_t>(begin + options_.batch_size, static_cast<int64_t>(order_.size()));
  std::vector<int64_t> indices(order_.begin() + begin, order_.begin() + end);
  Batch batch = in_workload_code(options_.source_name + "'s make_batch", [&] { return source_->make_batch(indices); });
  if (options_.build_delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(options_.build_delay_ms));
  if (options_.pin_memory) {
    batch.input = batch.input.pin_memory();
    batch.target = batch.target.pin_memory();
  }
  return batch;
}

void DataLoader::stop_workers() {
  for (auto& q : queues_) {
    std::lock_guard<std::mutex> lock(q->mutex);
    stopping_ = true;
    q->changed.notify_all();
  }
  stopping_ = true;
  for (auto& t : workers_) t.join();
  workers_.clear();
  queues_.clear();
  stopping_ = false;
}

void DataLoader::worker_loop(int64_t worker) {
  WorkerQueue& queue = *queues_[static_cast<size_t>(worker)];
  const int64_t total = batches_per_epoch();
  for (int64_t b = first_batch_ + worker; b < total; b += options_.num_workers) {
    {
      std::unique_lock<std::mutex> lock(queue.mutex);
      queue.changed.wait(lock, [&] { return stopping_ || static_cast<int64_t>(queue.ready.size()) < options_.prefetch; });
      if (stopping_) return;
    }
    Batch batch;
    try {
      batch = build(b);
    } catch (...) {
      std::lock_guard<std::mutex> lock(queue.mutex);
      queue.error = std::current_exception();
      queue.changed.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(queue.mutex);
    if (stopping_) return;
    queue.ready.push_back(std::move(batch));
    queue.changed.notify_all();
  }
}

void DataLoader::start_epoch(int64_t epoch, int64_t first_batch) {
  stop_workers();
  order_ = epoch_indices(epoch);
  first_batch_ = first_batch;
  next_batch_ = first_batch;
  for (int64_t w = 0; w < options_.num_workers; ++w) queues_.push_back(std::make_unique<WorkerQueue>());
  for (int64_t w = 0; w < options_.num_workers; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

std::optional<Batch> DataLoader::next() {
  if (next_batch_ >= batches_per_epoch()) return std::nullopt;
  const int64_t b = next_batch_++;
  if (options_.num_workers == 0) return build(b);
  WorkerQueue& queue = *queues_[static_cast<size_t>((b - first_batch_) % options_.num_workers)];
  std::unique_lock<std::mutex> lock(queue.mutex);
  queue.changed.wait(lock, [&] { return !queue.ready.empty() || queue.error; });
  if (queue.ready.empty()) std::rethrow_exception(queue.error);
  Batch batch = std::move(queue.ready.front());
  queue.ready.pop_front();
  queue.changed.notify_all();
  return batch;
}

}  // namespace dyno
