#include "dyno/suite/data_loader.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "dyno/workloads/image_source.h"

namespace dyno {
namespace {

// Synthetic, seeded images: isolates the loader from file I/O.
std::shared_ptr<const ExampleSource> synthetic(int64_t n) {
  torch::manual_seed(3);
  auto images = torch::randint(0, 256, {n, 1, 4, 4}, torch::kUInt8);
  auto labels = torch::arange(n, torch::kLong);
  return std::make_shared<ImageSource>(images, labels, 0.5, 0.25);
}

std::vector<Batch> epoch_batches(DataLoader& loader, int64_t epoch, int64_t first = 0) {
  loader.start_epoch(epoch, first);
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(*b);
  return out;
}

TEST(DataLoader, WorkersYieldExactlyTheBatchesOfTheTrainingThread) {
  auto source = synthetic(1000);
  LoaderOptions inline_options;
  inline_options.batch_size = 32;
  inline_options.seed = 7;
  DataLoader inline_loader(source, inline_options);
  for (int64_t workers : {1, 3}) {
    LoaderOptions threaded = inline_options;
    threaded.num_workers = workers;
    threaded.prefetch = 2;
    DataLoader threaded_loader(source, threaded);
    for (int64_t epoch : {0, 1}) {
      auto expected = epoch_batches(inline_loader, epoch);
      auto got = epoch_batches(threaded_loader, epoch);
      ASSERT_EQ(expected.size(), 31u);
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(torch::equal(got[i].input, expected[i].input)) << "workers " << workers << " batch " << i;
        EXPECT_TRUE(torch::equal(got[i].target, expected[i].target));
      }
    }
  }
}

TEST(DataLoader, ReshufflesPerEpochReproduciblyForASeed) {
  auto source = synthetic(100);
  LoaderOptions o;
  o.batch_size = 10;
  o.seed = 1;
  DataLoader a(source, o), b(source, o);
  EXPECT_EQ(a.epoch_indices(0), b.epoch_indices(0));
  EXPECT_NE(a.epoch_indices(0), a.epoch_indices(1));
  o.seed = 2;
  DataLoader c(source, o);
  EXPECT_NE(a.epoch_indices(0), c.epoch_indices(0));
}

// Rank `rank` of `world_size`, batches of 10.
LoaderOptions rank_of(int64_t rank, int64_t world_size) {
  LoaderOptions o;
  o.batch_size = 10;
  o.rank = rank;
  o.world_size = world_size;
  return o;
}

TEST(DataLoader, RanksReadDisjointShardsCoveringTheEpoch) {
  auto source = synthetic(100);
  std::set<int64_t> seen;
  for (int64_t rank = 0; rank < 2; ++rank) {
    LoaderOptions o = rank_of(rank, 2);
    o.seed = 5;
    DataLoader loader(source, o);
    auto mine = loader.epoch_indices(3);
    EXPECT_EQ(mine.size(), 50u);
    for (auto i : mine) EXPECT_TRUE(seen.insert(i).second) << "index " << i << " on two ranks";
  }
  EXPECT_EQ(seen.size(), 100u);
}

// Without drop_last (evaluation), the examples the ranks cannot share evenly go to the first
// ranks: every example once.
TEST(DataLoader, WithoutDropLastRanksReadEveryExampleOnce) {
  auto source = synthetic(103);
  std::multiset<int64_t> seen;
  for (int64_t rank = 0; rank < 4; ++rank) {
    LoaderOptions o = rank_of(rank, 4);
    o.shuffle = false;
    o.drop_last = false;
    DataLoader loader(source, o);
    const auto mine = loader.epoch_indices(0);
    EXPECT_EQ(mine.size(), rank < 3 ? 26u : 25u) << "rank " << rank;
    EXPECT_EQ(loader.batches_per_epoch(), 3) << "rank " << rank;
    int64_t batched = 0;
    for (const auto& b : epoch_batches(loader, 0)) batched += b.target.size(0);
    EXPECT_EQ(batched, static_cast<int64_t>(mine.size()));
    seen.insert(mine.begin(), mine.end());
  }
  EXPECT_EQ(seen.size(), 103u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 103u);
}

TEST(DataLoader, ResumeSkipsBatchesAlreadyTrainedOn) {
  auto source = synthetic(200);
  LoaderOptions o;
  o.batch_size = 20;
  o.num_workers = 2;
  DataLoader loader(source, o);
  auto full = epoch_batches(loader, 4);
  auto tail = epoch_batches(loader, 4, 3);
  ASSERT_EQ(tail.size(), full.size() - 3);
  for (size_t i = 0; i < tail.size(); ++i) EXPECT_TRUE(torch::equal(tail[i].target, full[i + 3].target));
}

TEST(DataLoader, NormalisesImages) {
  auto images = torch::full({2, 1, 2, 2}, 255, torch::kUInt8);
  ImageSource source(images, torch::zeros({2}, torch::kLong), 0.5, 0.25);
  auto batch = source.make_batch({0, 1});
  EXPECT_TRUE(torch::allclose(batch.input, torch::full({2, 1, 2, 2}, 2.0)));
}

}  // namespace
}  // namespace dyno
