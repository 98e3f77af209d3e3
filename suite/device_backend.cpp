#include "dyno/suite/device_backend.h"

#include <ATen/Context.h>

#include <chrono>
#include <string>
#include <thread>

#include <unistd.h>

#include "dyno/reports/child_process.h"
#include "dyno/reports/run_config.h"
#include "dyno/reports/user_error.h"
#include "dyno/suite/environment.h"

namespace dyno {
namespace {

int64_t host_memory_bytes() { return static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE)); }

class CpuBackend : public DeviceBackend {
 public:
  c10::Device device() const override { return c10::Device(c10::kCPU); }
  void synchronize() override {}
  void reset_peak_memory() override {}  // VmHWM cannot be reset without privileges
  int64_t peak_memory_bytes() override { return resident_set_peak_bytes(); }
  std::string peak_memory_kind() const override { return "resident_set"; }
  std::string device_name() override { return cpu_model("unknown cpu"); }
  int64_t memory_capacity_bytes() override { return host_memory_bytes(); }
  void apply_flags(const RunConfig& config) override {
    at::globalContext().setDeterministicAlgorithms(config.deterministic, /*warn_only=*/false);
  }
  std::unique_ptr<PhaseClock> make_phase_clock() override { return std::make_unique<HostPhaseClock>(); }
};

}  // namespace

void busy_wait(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < until) {
  }
}

int64_t resident_set_peak_bytes() { return proc_kib_field_bytes("/proc/self/status", "VmHWM"); }
int64_t host_huge_page_bytes() { return proc_kib_field_bytes("/proc/self/smaps_rollup", "AnonHugePages"); }

int64_t device_memory_capacity_bytes(const RunConfig& config) {
  if (config.device == "cpu") return host_memory_bytes();
  if (config.device == "cuda") return cuda_memory_capacity_bytes();
  return make_device_backend(config)->memory_capacity_bytes();  // the device's error
}

std::unique_ptr<DeviceBackend> make_device_backend(const RunConfig& config, int64_t local_rank) {
  if (config.device == "cpu") return std::make_unique<CpuBackend>();
  if (config.device == "cuda") return make_cuda_backend(config, local_rank);
  throw UserError("config", "device: '" + config.device + "' is not one of cpu, cuda");
}

}  // namespace dyno
