#include "dyno/reports/host_allocator_environment.h"

#include <cstdlib>
#include <fstream>

namespace dyno {
namespace {

constexpr const char* kHugetlbTunable = "glibc.malloc.hugetlb";

}  // namespace

std::vector<std::string> host_allocator_start_environment(const std::string& mode, const char* ld_preload, const char* glibc_tunables,
                                                          const std::string& thp_enabled) {
  const auto after = [](const char* inherited) { return inherited && *inherited ? std::string(":") + inherited : std::string(); };
  if (mode == "tcmalloc") {
    if (ld_preload && std::string(ld_preload).find(kTcmallocLibrary) != std::string::npos) return {};
    return {std::string("LD_PRELOAD=") + kTcmallocLibrary + after(ld_preload)};
  }
  if (mode == "hugepages") {
    if (thp_enabled.find("[madvise]") == std::string::npos) return {};
    if (glibc_tunables && std::string(glibc_tunables).find(kHugetlbTunable) != std::string::npos) return {};
    return {std::string("GLIBC_TUNABLES=") + kHugetlbTunable + "=1" + after(glibc_tunables)};
  }
  return {};
}

std::vector<std::string> host_allocator_start_environment(const std::string& mode) {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string thp;
  std::getline(in, thp);
  return host_allocator_start_environment(mode, std::getenv("LD_PRELOAD"), std::getenv("GLIBC_TUNABLES"), thp);
}

}  // namespace dyno
