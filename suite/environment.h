// Describes the machine and libraries a run used, for the report's `environment` block.
#pragma once

#include <string>

#include "dyno/reports/run_report.h"

namespace dyno {

class DeviceBackend;

Environment collect_environment(DeviceBackend& backend);
std::string dyno_revision();
std::string libtorch_version();

}  // namespace dyno
