#include "dyno/reports/host_allocator_environment.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dyno {
namespace {

using Entries = std::vector<std::string>;
const std::string kMadvise = "always [madvise] never";

TEST(HostAllocatorEnvironment, HugepagesAsksGlibcForHugePagesAheadOfTheInheritedTunables) {
  EXPECT_EQ(host_allocator_start_environment("hugepages", nullptr, nullptr, kMadvise), Entries{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"});
  EXPECT_EQ(host_allocator_start_environment("hugepages", nullptr, "glibc.malloc.arena_max=2", kMadvise),
            Entries{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1:glibc.malloc.arena_max=2"});
}

TEST(HostAllocatorEnvironment, HugepagesLeavesAUsersHugetlbTunableAndAKernelThatDecidesAlone) {
  EXPECT_TRUE(host_allocator_start_environment("hugepages", nullptr, "glibc.malloc.hugetlb=0", kMadvise).empty());
  EXPECT_TRUE(host_allocator_start_environment("hugepages", nullptr, nullptr, "[always] madvise never").empty());
  EXPECT_TRUE(host_allocator_start_environment("hugepages", nullptr, nullptr, "always madvise [never]").empty());
  EXPECT_TRUE(host_allocator_start_environment("hugepages", nullptr, nullptr, "").empty()) << "no THP file: not Linux's THP";
}

TEST(HostAllocatorEnvironment, TcmallocIsPreloadedAheadOfTheInheritedPreloadsOnce) {
  EXPECT_EQ(host_allocator_start_environment("tcmalloc", nullptr, nullptr, kMadvise), Entries{"LD_PRELOAD=libtcmalloc_minimal.so.4"});
  EXPECT_EQ(host_allocator_start_environment("tcmalloc", "libfoo.so", nullptr, kMadvise), Entries{"LD_PRELOAD=libtcmalloc_minimal.so.4:libfoo.so"});
  EXPECT_TRUE(host_allocator_start_environment("tcmalloc", "/usr/lib/libtcmalloc_minimal.so.4", nullptr, kMadvise).empty());
}

TEST(HostAllocatorEnvironment, ModesSetInTheProcessNeedNothingAtItsStart) {
  for (const char* mode : {"system", "retain"}) EXPECT_TRUE(host_allocator_start_environment(mode, nullptr, nullptr, kMadvise).empty()) << mode;
}

}  // namespace
}  // namespace dyno
