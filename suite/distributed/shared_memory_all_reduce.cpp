#include "dyno/suite/distributed/shared_memory_all_reduce.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <ATen/record_function.h>

#include "dyno/reports/user_error.h"
#include "dyno/suite/distributed/rank_failure.h"

namespace dyno {
namespace {

constexpr size_t kSlotBytes = 4 << 20;
constexpr size_t kSlotFloats = kSlotBytes / sizeof(float);
constexpr size_t kControlBytes = 64;  // one cache line: the arrival counter

std::atomic<uint64_t>& arrivals(void* segment) { return *static_cast<std::atomic<uint64_t>*>(segment); }

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

class AverageHook : public c10d::CommHookInterface {
 public:
  explicit AverageHook(SharedMemoryAllReduce& all_reduce) : all_reduce_(all_reduce) {}
  c10::intrusive_ptr<c10::ivalue::Future> runHook(c10d::GradBucket& bucket) override {
    RECORD_USER_SCOPE("dyno::shm_all_reduce");  // a collective in a profile's trace
    at::Tensor buffer = bucket.getBufferRef();
    all_reduce_.average(buffer);
    auto future = c10::make_intrusive<c10::ivalue::Future>(c10::TensorType::get());
    future->markCompleted(c10::IValue(buffer));
    return future;
  }
  at::Tensor parseHookResult(const c10::IValue& result) override { return c10d::detail::parseCppCommHookResult(result); }

 private:
  SharedMemoryAllReduce& all_reduce_;
};

}  // namespace

SharedMemoryAllReduce::SharedMemoryAllReduce(c10d::Store& store, int rank, int world_size, std::chrono::milliseconds timeout)
    : rank_(rank), world_size_(world_size), timeout_(timeout) {
  static_assert(std::atomic<uint64_t>::is_always_lock_free, "the arrival counter is shared between processes");
  bytes_ = kControlBytes + static_cast<size_t>(world_size) * kSlotBytes;
  std::string name;
  int fd = -1;
  // Rank 0's name goes when this constructor ends, by an error or once every rank has mapped it.
  struct Unlinked {
    std::string name;
    ~Unlinked() {
      if (!name.empty()) ::shm_unlink(name.c_str());
    }
  } created;
  if (rank == 0) {
    name = "/dyno-all-reduce-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) created.name = name;
    // Its pages are reserved now (posix_fallocate, not ftruncate): a full /dev/shm is this error,
    // not a SIGBUS at the first write in a step.
    const int err = fd < 0 ? errno : ::posix_fallocate(fd, 0, static_cast<off_t>(bytes_));
    if (err != 0) {
      if (fd >= 0) ::close(fd);
      // The reason in place of a name (which starts with '/'): every rank throws it, whichever the launcher blames.
      const std::string reason = "rank 0 cannot create the shared-memory segment for ddp.backend=shm (" + std::to_string(bytes_ >> 20) +
                                 " MiB in /dev/shm): " + std::strerror(err);
      store.set("dyno/shm_all_reduce", std::vector<uint8_t>(reason.begin(), reason.end()));
      throw SharedMemoryUnavailable(reason);
    }
    store.set("dyno/shm_all_reduce", std::vector<uint8_t>(name.begin(), name.end()));
  } else {
    try {
      const auto value = store.get("dyno/shm_all_reduce");  // waits for rank 0, up to the store's timeout
      name.assign(value.begin(), value.end());
    } catch (const c10::DistNetworkError& error) {  // rank 0, which serves the store, ended first
      throw RankFailure("lost the store while waiting for rank 0's shared-memory segment: " + std::string(error.what_without_backtrace()));
    }
    if (name.empty() || name[0] != '/') throw SharedMemoryUnavailable(name);
    fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) throw UserError("ddp", "cannot open rank 0's shared-memory segment " + name + ": " + std::strerror(errno));
  }
  segment_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (segment_ == MAP_FAILED) {
    segment_ = nullptr;
    throw UserError("ddp", "cannot map the shared-memory segment " + name + ": " + std::strerror(errno));
  }
  // Every rank has mapped it: the name can go (the mappings keep the memory).
  store.add("dyno/shm_all_reduce_mapped", 1);
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (store.add("dyno/shm_all_reduce_mapped", 0) < world_size) {
    if (std::chrono::steady_clock::now() > deadline) throw UserError("ddp", "not every rank mapped the shared-memory segment within ddp.timeout_s");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

SharedMemoryAllReduce::~SharedMemoryAllReduce() {
  if (segment_) ::munmap(segment_, bytes_);
}

float* SharedMemoryAllReduce::slot(int rank) const {
  return reinterpret_cast<float*>(static_cast<char*>(segment_) + kControlBytes + static_cast<size_t>(rank) * kSlotBytes);
}

void SharedMemoryAllReduce::wait_for_all() {
  const uint64_t target = ++generation_ * static_cast<uint64_t>(world_size_);
  auto& counter = arrivals(segment_);
  counter.fetch_add(1, std::memory_order_acq_rel);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t spins = 0; counter.load(std::memory_order_acquire) < target; ++spins) {
    if (spins < 2000) {
      pause();
      continue;
    }
    sched_yield();
    if (spins % 1024 == 0 && std::chrono::steady_clock::now() - start > timeout_)
      throw RankFailure("rank " + std::to_string(rank_) + " waited " + std::to_string(timeout_.count() / 1000) +
                        " s (ddp.timeout_s) for the other ranks in the gradient all-reduce: a rank died or hangs");
  }
}

void SharedMemoryAllReduce::average(at::Tensor& tensor) {
  at::Tensor values = tensor.scalar_type() == at::kFloat && tensor.is_contiguous() ? tensor : tensor.to(at::kFloat).contiguous();
  float* data = values.data_ptr<float>();
  const size_t n = static_cast<size_t>(values.numel());
  const float scale = 1.0f / static_cast<float>(world_size_);
  const size_t w = static_cast<size_t>(world_size_);
  float* mine = slot(rank_);
  std::vector<const float*> slots;
  for (int r = 0; r < world_size_; ++r) slots.push_back(slot(r));
  for (size_t offset = 0; offset < n; offset += kSlotFloats) {
    const size_t length = std::min(kSlotFloats, n - offset);
    std::memcpy(mine, data + offset, length * sizeof(float));
    wait_for_all();
    // This rank's share of the chunk, summed over the slots in rank order into its own slot.
    const size_t lo = length * static_cast<size_t>(rank_) / w, hi = length * static_cast<size_t>(rank_ + 1) / w;
    for (size_t i = lo; i < hi; ++i) {
      float sum = slots[0][i];
      for (size_t r = 1; r < w; ++r) sum += slots[r][i];
      mine[i] = sum * scale;
    }
    wait_for_all();
    for (size_t r = 0; r < w; ++r) {
      const size_t from = length * r / w, to = length * (r + 1) / w;
      std::memcpy(data + offset + from, slots[r] + from, (to - from) * sizeof(float));
    }
    wait_for_all();  // every rank has its result before any slot is overwritten
  }
  if (values.data_ptr() != tensor.data_ptr()) tensor.copy_(values);
}

std::unique_ptr<c10d::CommHookInterface> SharedMemoryAllReduce::comm_hook() { return std::make_unique<AverageHook>(*this); }

}  // namespace dyno
