#include "dyno/suite/distributed/shared_memory_all_reduce.h"

#include <thread>

#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "dyno/suite/distributed/rank_failure.h"

namespace dyno {
namespace {

// `world` ranks as threads over one in-process store: the segment is mapped once per rank, as in
// separate processes. Each rank averages `make(rank)`; returns every rank's result.
std::vector<at::Tensor> average_over(int world, const std::function<at::Tensor(int)>& make, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<at::Tensor> results(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      SharedMemoryAllReduce all_reduce(*store, r, world, timeout);
      results[r] = make(r);
      all_reduce.average(results[r]);
    });
  for (auto& t : ranks) t.join();
  return results;
}

TEST(SharedMemoryAllReduce, EveryRankGetsTheSameMean) {
  // 2.5 slots' worth of floats, an odd count: chunked, with unequal shares.
  const int64_t n = 2'500'001;
  const auto results = average_over(3, [&](int rank) { return torch::arange(n, torch::kFloat) * static_cast<double>(rank + 1); });
  const at::Tensor expected = torch::arange(n, torch::kFloat) * 2.0;  // mean of x1, x2, x3
  for (const auto& r : results) {
    EXPECT_TRUE(torch::allclose(r, expected, 1e-6, 1e-3));
    EXPECT_TRUE(torch::equal(r, results[0]));  // bit for bit: each element summed by one rank
  }
}

TEST(SharedMemoryAllReduce, OtherDtypesAndNonContiguousTensorsAreAveragedInPlace) {
  const auto results = average_over(2, [](int rank) { return torch::full({4, 3}, rank == 0 ? 1.0 : 3.0, torch::kDouble).t(); });
  for (const auto& r : results) {
    EXPECT_EQ(r.scalar_type(), torch::kDouble);
    EXPECT_TRUE(torch::equal(r, torch::full({3, 4}, 2.0, torch::kDouble)));
  }
}

TEST(SharedMemoryAllReduce, ARankThatNeverArrivesFailsTheOthersAfterTheTimeout) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::thread absent([&] { SharedMemoryAllReduce(*store, 1, 2, std::chrono::seconds(5)); });  // maps the segment, never averages
  SharedMemoryAllReduce all_reduce(*store, 0, 2, std::chrono::milliseconds(300));
  absent.join();
  at::Tensor t = torch::ones({8});
  EXPECT_THROW(all_reduce.average(t), RankFailure);  // not this rank's input: another rank's failure
}

}  // namespace
}  // namespace dyno
