#include "dyno/workloads/scripted_workload.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <vector>

#include <torch/torch.h>

#include "dyno/reports/run_config.h"
#include "dyno/reports/user_error.h"
#include "dyno/workloads/scripted_module.h"
#include "dyno/workloads/workload_registry.h"
#include "dyno/workloads/tensor_source.h"

namespace dyno {
namespace {

// Share of the data file held out for evaluation when no eval_data_file is given.
constexpr double kHeldOutFraction = 0.1;

bool has_convolution(const torch::jit::Module& module) {
  for (const auto& m : module.modules()) {
    const auto type = m.type()->name();
    if (type && type->name().rfind("Conv", 0) == 0) return true;
  }
  return false;
}

// size=tiny and size=small keep the first examples, as the built-in workloads do.
std::shared_ptr<const ExampleSource> limited(const std::shared_ptr<TensorSource>& source, const std::string& size, int64_t tiny) {
  const int64_t n = source->size();
  const int64_t keep = size == "tiny" ? std::min(n, tiny) : size == "small" ? std::max<int64_t>(1, n / 10) : n;
  return keep == n ? source : source->slice(0, keep);
}

// The classes (integer targets, cross-entropy's -100 left out) in `targets`.
int64_t class_count(const torch::Tensor& targets) {
  return std::get<0>(at::_unique(targets.masked_select(targets.ne(-100)))).numel();
}

// A data file saved sorted by class leaves its last tenth few of the classes: an accuracy on that
// says little about the model, so the run says so. Judged for cross-entropy with one class id per
// example, against the classes m examples drawn at random would hold, K (1 - (1 - 1/K)^m): fewer
// than half of that (a file in random order falls that far short almost never).
void warn_if_held_out_misses_classes(const TensorSource& all, const TensorSource& held_out, const std::string& data_file) {
  if (all.targets().is_floating_point() || all.targets().dim() != 1) return;
  const auto in_file = static_cast<double>(class_count(all.targets())), in_held_out = static_cast<double>(class_count(held_out.targets()));
  const double at_random = in_file * (1 - std::pow(1 - 1 / in_file, static_cast<double>(held_out.size())));
  if (in_file >= 2 && in_held_out < at_random / 2)
    std::fprintf(stderr,
                 "[train] warning: the evaluation set, the last 10%% of '%s', holds %.0f of the file's %.0f classes (in a random order about %.0f): "
                 "is the file sorted by class? Shuffle it before saving, or give eval_data_file (--eval-data)\n",
                 data_file.c_str(), in_held_out, in_file, at_random);
}

// Both load_data and build_model need the data (build_model for a sample input); it is read once.
struct ScriptedData {
  std::string data_file;
  std::string eval_data_file;
  bool mse = false;  // --loss mse: the targets are values, not classes
  std::once_flag once;
  std::shared_ptr<TensorSource> train;
  std::shared_ptr<TensorSource> eval;

  void load() {
    std::call_once(once, [this] {
      auto all = TensorSource::from_file(data_file);
      if (!eval_data_file.empty()) {
        train = all;
        eval = TensorSource::from_file(eval_data_file);
        return;
      }
      const int64_t held_out = static_cast<int64_t>(static_cast<double>(all->size()) * kHeldOutFraction);
      if (held_out < 1 || held_out == all->size())
        throw UserError("data", "'" + data_file + "' has " + std::to_string(all->size()) +
                                    " examples, too few to hold out 10% for evaluation; give eval_data_file (--eval-data)");
      train = all->slice(0, all->size() - held_out);
      eval = all->slice(all->size() - held_out, held_out);
      if (!mse) warn_if_held_out_misses_classes(*all, *eval, data_file);
    });
  }
};


// Whether `file`'s examples fit the model and the loss, tried on its first two examples before
// training: the model's forward on its inputs, and its targets against the outputs (cross-entropy:
// integer class ids below the outputs' last dimension, one per output row; mse: as many values as
// an output). A misfit is the user's data, named with its shapes, not an error deep in a step.
void check_fit(SegmentedModel& model, const TensorSource& source, const std::string& file, const std::string& model_file, bool mse) {
  const std::string where = "'" + file + "' (inputs " + shape_text(source.inputs()) + ", targets " + shape_text(source.targets()) + ")";
  torch::Tensor output;
  // In eval mode: batch norm's running statistics and dropout's random draws stay untouched.
  const bool training = model->is_training();
  model->eval();
  // Three examples (as many as there are, up to three): a model dimension of two cannot pass for the batch's.
  std::vector<int64_t> examples(static_cast<size_t>(std::min<int64_t>(3, source.size())));
  std::iota(examples.begin(), examples.end(), int64_t{0});
  const std::string count = std::to_string(examples.size());
  try {
    torch::NoGradGuard no_grad;
    output = model->forward(source.make_batch(examples).input);
  } catch (const std::exception& e) {
    throw UserError("data", where + " does not fit the model '" + model_file + "': its forward on " + count + " examples failed: " + exception_text(e));
  }
  model->train(training);
  if (output.dim() == 0)
    throw UserError("data", "the model '" + model_file + "' returns a single number for a batch; dyno trains models whose output has a row per example");
  if (output.size(0) != static_cast<int64_t>(examples.size()))
    throw UserError("data", "the model '" + model_file + "' returns " + shape_text(output) + " for " + count + " examples (" + where +
                                "); dyno trains models whose output's first dimension is the batch's");
  const torch::Tensor& targets = source.targets();
  const int64_t outputs_per_example = output.numel() / std::max<int64_t>(output.size(0), 1);
  const int64_t targets_per_example = targets.numel() / std::max<int64_t>(targets.size(0), 1);
  if (mse) {
    // Value for value: an example's outputs and targets of one shape (a trailing dimension of 1 aside: [N] against [N, 1]).
    auto per_example = [](const torch::Tensor& t) {
      std::vector<int64_t> shape(t.sizes().begin() + 1, t.sizes().end());
      while (!shape.empty() && shape.back() == 1) shape.pop_back();
      return shape;
    };
    if (targets_per_example != outputs_per_example)
      throw UserError("data", where + ": --loss mse compares each example's " + std::to_string(outputs_per_example) + " outputs (shape " +
                                  shape_text(output) + " for " + count + ") with as many target values; the targets have " +
                                  std::to_string(targets_per_example));
    if (per_example(output) != per_example(targets))
      throw UserError("data", where + ": --loss mse compares outputs and targets value for value: an example's outputs have shape " +
                                  c10::str(c10::IntArrayRef(per_example(output))) + ", its targets " + c10::str(c10::IntArrayRef(per_example(targets))) +
                                  "; save the targets in the outputs' shape");
    return;
  }
  const int64_t classes = output.dim() > 0 ? output.size(-1) : 1;
  if (targets.is_floating_point())
    throw UserError("data", where + ": the targets are floating point; cross-entropy needs integer class ids from 0 to " +
                                std::to_string(classes - 1) + " (the model's " + std::to_string(classes) +
                                " outputs), or use --loss mse for regression");
  if (targets_per_example * classes != outputs_per_example)
    throw UserError("data", where + ": cross-entropy needs one class id per row of " + std::to_string(classes) + " outputs: " +
                                std::to_string(outputs_per_example / std::max<int64_t>(classes, 1)) + " an example, the targets have " +
                                std::to_string(targets_per_example));
  const torch::Tensor ids = targets.masked_select(targets.ne(-100));  // cross-entropy's ignore_index
  const int64_t low = ids.numel() ? ids.min().item<int64_t>() : 0, high = ids.numel() ? ids.max().item<int64_t>() : 0;
  if (low < 0 || high >= classes)
    throw UserError("data", where + ": class ids range from " + std::to_string(low) + " to " + std::to_string(high) + "; the model has " +
                                std::to_string(classes) + " outputs, so they must lie in 0.." + std::to_string(classes - 1));
}

}  // namespace

Workload scripted_workload(const RunConfig& config) {
  if (config.model_file.empty())
    throw UserError("config", "model_file: empty; workload=torchscript trains a scripted model: give --model model.pt (model_file)");
  if (config.data_file.empty())
    throw UserError("config", "data_file: empty; workload=torchscript needs --data data.pt (data_file), written by torch.save({\"inputs\": X, \"targets\": Y}, path)");
  torch::jit::Module script = load_trainable_script(config.model_file);

  Workload w;
  w.name = kTorchScriptWorkload;
  w.description = "TorchScript model " + config.model_file;
  w.data_description = config.data_file + (config.eval_data_file.empty() ? " (last 10% held out for evaluation)" : ", evaluated on " + config.eval_data_file);
  w.convolutional = has_convolution(script);
  w.recipe = {"adamw", 1e-3, 0, 0.9, "constant", 0, 10, 64};
  if (config.model_loss == "mse") {
    w.metric_name = "val_loss";
    w.higher_is_better = false;
    w.target = 0;
    w.target_note = "mean squared error on the evaluation data; set target= to stop there";
    w.loss = [](const torch::Tensor& output, const torch::Tensor& target) {
      return torch::mse_loss(output.to(torch::kFloat), target.to(torch::kFloat).reshape(output.sizes()));
    };
  } else {
    w.metric_name = "accuracy";
    w.target = 1.0;
    w.target_note = "classification accuracy on the evaluation data; set target= to stop there";
  }
  auto data = std::make_shared<ScriptedData>();
  data->data_file = config.data_file;
  data->eval_data_file = config.eval_data_file;
  data->mse = config.model_loss == "mse";
  w.load_data = [data](const std::string& size) {
    data->load();
    return WorkloadData{limited(data->train, size, 512), limited(data->eval, size, 256)};
  };
  // Each model is read from the file again: fresh leaf parameters (a jit clone's are not leaves).
  // The data is checked against the first one.
  auto checked = std::make_shared<std::once_flag>();
  w.build_model = [data, checked, model_file = config.model_file, data_file = config.data_file,
                   eval_file = config.eval_data_file.empty() ? config.data_file : config.eval_data_file, mse = config.model_loss == "mse"] {
    data->load();
    // (Two examples, or more: batch norm in training mode needs two.)
    std::vector<int64_t> sample(static_cast<size_t>(std::min<int64_t>(4, data->train->size())));
    std::iota(sample.begin(), sample.end(), int64_t{0});
    SegmentedModel model = segment_script(load_trainable_script(model_file), data->train->make_batch(sample).input);
    std::call_once(*checked, [&] {
      check_fit(model, *data->train, data_file, model_file, mse);
      check_fit(model, *data->eval, eval_file, model_file, mse);
    });
    return model;
  };
  return w;
}

}  // namespace dyno
