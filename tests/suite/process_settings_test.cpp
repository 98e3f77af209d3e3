#include "dyno/suite/process_settings.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <torch/torch.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

#if defined(__GLIBC__)
// Mapped blocks after one 64 MiB allocation (above glibc's largest mmap threshold, 32 MiB).
size_t mapped_blocks_with_a_large_block() {
  void* block = std::malloc(64 << 20);
  std::memset(block, 1, 4096);
  asm volatile("" : : "r"(block) : "memory");  // the allocation is observed: not elided
  const size_t mapped = mallinfo2().hblks;
  std::free(block);
  return mapped;
}

TEST(ProcessSettings, RetainServesLargeBlocksFromTheHeap) {
  const size_t before = mallinfo2().hblks;
  EXPECT_EQ(mapped_blocks_with_a_large_block(), before + 1) << "system: glibc maps a 64 MiB block";
  apply_host_allocator("retain");
  EXPECT_EQ(mapped_blocks_with_a_large_block(), before) << "retain: the block comes from the heap";
}
#endif

TEST(ProcessSettings, UnknownAllocatorNamesTheKnobAndTheChoices) {
  try {
    apply_host_allocator("jemalloc");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("host_allocator: 'jemalloc' is not one of system, retain, hugepages, tcmalloc"), std::string::npos) << e.what();
  }
}

TEST(ProcessSettings, TcmallocOutsideAPreloadedProcessSaysHowToLoadIt) {
  try {
    apply_host_allocator("tcmalloc");
    FAIL() << "expected a UserError: this test binary does not preload tcmalloc";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("host_allocator: tcmalloc is not loaded in this process: install Debian's libtcmalloc-minimal4"),
              std::string::npos) << e.what();
  }
}

// Each case runs in a fresh process (the threadsafe death-test style re-executes the binary):
// FTZ/DAZ is a process-wide setting that the intra-op threads copy when they start.
int64_t subnormal_products_kept() {
  torch::set_num_threads(2);
  // Large enough that the multiply is split across the intra-op threads.
  // Bits 1 are the smallest subnormal float; the product is counted by its bits, too.
  const auto subnormal = torch::full({1 << 20}, 1, torch::kInt32).view(torch::kFloat32);
  return (subnormal * 3.0f).view(torch::kInt32).count_nonzero().item<int64_t>();
}

TEST(ProcessSettings, FlushDenormalZeroesSubnormalsOnEveryIntraOpThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(subnormal_products_kept() == (1 << 20) ? 0 : 1), testing::ExitedWithCode(0), "") << "off: subnormals are kept";
  EXPECT_EXIT(
      {
        torch::set_num_threads(2);
        apply_flush_denormal();
        std::exit(subnormal_products_kept() == 0 ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

TEST(ProcessSettings, FlushDenormalAfterThePoolStartedIsAnError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        subnormal_products_kept();  // starts the intra-op threads without FTZ
        try {
          apply_flush_denormal();
        } catch (const UserError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(3);
        }
        std::exit(0);
      },
      testing::ExitedWithCode(3), "flush_denormal: true reached only some threads");
}

TEST(ThreadChoice, RanksSharingAMachineDivideItsCores) {
  EXPECT_EQ(choose_threads(0, 2, 2, nullptr).threads, 1);
  EXPECT_EQ(choose_threads(0, 4, 16, nullptr).threads, 4);
  EXPECT_EQ(choose_threads(0, 3, 2, nullptr).threads, 1);  // at least one each
  EXPECT_NE(choose_threads(0, 3, 2, nullptr).warning, "");
  EXPECT_EQ(choose_threads(0, 2, 2, nullptr).warning, "");
}

TEST(ThreadChoice, OneProcessKeepsLibTorchsDefault) {
  EXPECT_EQ(choose_threads(0, 1, 16, nullptr).threads, 0);
  EXPECT_EQ(choose_threads(0, 1, 16, nullptr).warning, "");
}

TEST(ThreadChoice, TheKnobThenOmpNumThreadsComeFirst) {
  EXPECT_EQ(choose_threads(3, 2, 16, "5").threads, 3);
  EXPECT_EQ(choose_threads(0, 2, 16, "5").threads, 5);
  EXPECT_EQ(choose_threads(0, 2, 16, "five").threads, 0);  // OpenMP ignores it too
}

TEST(ThreadChoice, OversubscribingTheCoresWarnsWithTheArithmetic) {
  EXPECT_EQ(choose_threads(2, 2, 2, nullptr).warning,
            "2 threads x 2 ranks on this machine = 4 threads on 2 cores: the threads oversubscribe the cores and wait for each other "
            "(leave threads=0 to divide the cores among the ranks)");
  EXPECT_EQ(choose_threads(0, 2, 2, "2").threads, 2);
  EXPECT_NE(choose_threads(0, 2, 2, "2").warning, "");
}

TEST(ThreadChoice, UsableCoresIsTheAffinityMask) {
  EXPECT_GE(usable_cores(), 1);
  EXPECT_LE(usable_cores(), static_cast<int64_t>(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace dyno
