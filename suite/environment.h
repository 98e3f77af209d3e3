// Describes the machine and libraries a run used, for the report's `environment` block.
#pragma once

#include <string>

#include "dyno/reports/run_report.h"

namespace dyno {

class DeviceBackend;

Environment collect_environment(DeviceBackend& backend);
// The CPU's model name as /proc/cpuinfo gives it, `unknown` where it names none (aarch64 kernels):
// the environment's cpu_model ("unknown") and the CPU back end's device name ("unknown cpu"), as
// stored fingerprints recorded them.
std::string cpu_model(const std::string& unknown = "unknown");
std::string dyno_revision();
std::string libtorch_version();

}  // namespace dyno
