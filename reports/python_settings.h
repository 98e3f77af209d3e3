// A run configuration's settings as PyTorch Python: what `dyno tune` writes to best-config.py,
// each block naming the knob it comes from, for a user to carry into their own training script.
#pragma once

#include <string>

#include "dyno/reports/run_config.h"

namespace dyno {

// What the workload fixes and no knob names: the optimizer's other settings and the loss.
struct PythonRecipe {
  double weight_decay = 0;
  double momentum = 0.9;       // sgd only
  double warmup_fraction = 0;  // cosine: the share of steps spent warming up
  // cross_entropy (over the output's last dimension), mse, or own (the workload's C++ loss, which
  // Python cannot be given).
  std::string loss = "cross_entropy";
};

// `config` resolved (resolve_config) names the optimizer and the learning rate it trains with.
std::string best_config_python(const RunConfig& config, const PythonRecipe& recipe);

}  // namespace dyno
