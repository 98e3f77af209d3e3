// Describes the machine and libraries a run used, for the report's `environment` block.
#pragma once

#include <string>

#include "dyno/reports/run_report.h"

namespace dyno {

class DeviceBackend;

Environment collect_environment(DeviceBackend& backend);
// The CPU's model name as /proc/cpuinfo gives it ("unknown cpu" where it names none): the CPU
// back end's device name too.
std::string cpu_model();
std::string dyno_revision();
std::string libtorch_version();

}  // namespace dyno
