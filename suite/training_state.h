// Save and resume of the full training state: model parameters and buffers, optimizer state,
// gradient-scaler state, step / epoch / position in the epoch, and the RNG states, so that a
// resumed run continues bit-for-bit (on CPU) where the saved one stopped. Written atomically.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

namespace dyno {

struct TrainingProgress {
  int64_t step = 0;            // optimizer steps done
  int64_t epoch = 0;           // current epoch
  int64_t batch_in_epoch = 0;  // micro-batches of `epoch` already consumed
  double scaler_scale = 0;
  int64_t scaler_growth_tracker = 0;
  std::string workload;
  double elapsed_s = 0;  // training wall time before the save
  std::string optimizer;  // its kind (adamw, sgd); empty in a state saved before dyno recorded it
  // The settings that place batch_in_epoch in the data (JSON: batch size, accumulation, ranks, seed,
  // size); empty in a state saved before dyno recorded them.
  std::string data_position;
  // The evaluations so far, for the stop rules and time to target to go on from them: the best
  // metric (NaN: none yet, or a state saved before dyno recorded it), the evaluations since it
  // improved, and the training time at which the target was reached (NaN: not reached).
  double best_metric = std::numeric_limits<double>::quiet_NaN();
  int64_t evaluations_without_improvement = 0;
  double time_to_target_s = std::numeric_limits<double>::quiet_NaN();
};

void save_training_state(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         const TrainingProgress& progress, const c10::Device& device);
// Throws UserError when the file is missing, unreadable, of another workload or optimizer kind, or
// does not fit the model.
TrainingProgress load_training_state(const std::string& path, torch::nn::Module& model,
                                     torch::optim::Optimizer& optimizer, const std::string& workload,
                                     const std::string& optimizer_kind, const c10::Device& device);

}  // namespace dyno
