// Workload: a complete training recipe (model, data, loss, optimizer, LR schedule, evaluation
// metric, target quality) that the engine can run under any RunConfig. dyno's own and a user's
// are registered alike with DYNO_WORKLOAD (workloads/workload_registry.h); `dyno workloads` lists them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "dyno/workloads/example_source.h"
#include "dyno/workloads/segmented_model.h"

namespace dyno {

struct Recipe {
  std::string optimizer = "adamw";  // sgd | adamw
  double lr = 1e-3;
  double weight_decay = 0;
  double momentum = 0.9;  // sgd only
  std::string schedule = "constant";  // constant | cosine | onecycle
  double warmup_fraction = 0.05;      // cosine: share of steps spent warming up
  int64_t epochs = 10;
  int64_t reference_batch_size = 64;  // the batch the LR was tuned for (lr_scaling is relative to it)
};

struct WorkloadData {
  std::shared_ptr<const ExampleSource> train;
  std::shared_ptr<const ExampleSource> eval;
};

// The training loss of a model's output against a batch's target, reduced to a mean.
using LossFunction = std::function<torch::Tensor(const torch::Tensor& output, const torch::Tensor& target)>;

struct Workload {
  std::string name;
  std::string description;
  std::string data_description;
  // "accuracy" (argmax of the output's last dimension against integer targets, higher is better)
  // or "val_loss" (the loss over the evaluation data, lower is better).
  std::string metric_name = "accuracy";
  bool higher_is_better = true;
  double target = 0;  // the metric a converged run reaches (accuracy 0.9; a loss); 0: none, never reached
  std::string target_note;  // where the target comes from
  std::string throughput_unit = "samples";
  bool convolutional = false;  // channels_last applies
  Recipe recipe;
  // size: full | small | tiny. Throws UserError (with the Debian package to install) when data is missing.
  std::function<WorkloadData(const std::string& size)> load_data;
  std::function<SegmentedModel()> build_model;
  // Empty: cross-entropy over the output's last dimension, with the run's label_smoothing.
  LossFunction loss;
};

}  // namespace dyno
