#include "dyno/suite/environment.h"

#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "dyno/suite/device_backend.h"
#include "dyno/suite/git_revision.h"

namespace dyno {
namespace {

std::string dotted(long version, long major_div, long minor_div) {
  if (version <= 0) return "";
  return std::to_string(version / major_div) + "." + std::to_string((version % major_div) / minor_div);
}

}  // namespace

std::string cpu_model(const std::string& unknown) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return unknown;
}

std::string dyno_revision() { return kDynoGitRevision; }
std::string libtorch_version() { return TORCH_VERSION; }

Environment collect_environment(DeviceBackend& backend) {
  Environment e;
  e.dyno_revision = dyno_revision();
  e.libtorch_version = libtorch_version();
  try {
    const auto& hooks = at::detail::getCUDAHooks();
    e.cuda_version = dotted(hooks.versionCUDART(), 1000, 10);   // 13000 -> 13.0
    e.cudnn_version = dotted(hooks.versionCuDNN(), 10000, 100);  // 91900 -> 9.19
  } catch (const std::exception&) {
    // LibTorch without CUDA: leave both empty.
  }
  e.device = backend.device().is_cpu() ? "cpu" : "cuda";
  e.device_name = backend.device_name();
  e.cpu_model = cpu_model();
  e.cores = static_cast<int64_t>(std::thread::hardware_concurrency());
  e.memory_bytes = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  e.threads = at::get_num_threads();
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) e.host = host;
  return e;
}

}  // namespace dyno
