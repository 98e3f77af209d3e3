// A run configuration's settings as PyTorch Python: what `dyno tune` writes to best-config.py,
// each block naming the knob it comes from, for a user to carry into their own training script.
#pragma once

#include <string>

#include "reports/run_config.h"

namespace dyno {

// `config` resolved (resolve_config) names the optimizer and the learning rate it trains with.
std::string best_config_python(const RunConfig& config);

}  // namespace dyno
