// The "torchscript" workload: a user's scripted model (model_file) trained on tensors saved from
// Python (data_file, and eval_data_file or the data file's last 10%), with the loss model_loss
// names. No C++ needed: `dyno train --model model.pt --data data.pt`.
#pragma once

#include "dyno/workloads/workload.h"

namespace dyno {

struct RunConfig;

inline constexpr const char* kTorchScriptWorkload = "torchscript";

// Loads the model at once (to check it can be trained and to see whether it has convolutions);
// the data is read when the run asks for it. Throws UserError naming the knob or the file.
Workload scripted_workload(const RunConfig& config);

}  // namespace dyno
