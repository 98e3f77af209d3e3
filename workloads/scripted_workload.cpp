#include "workloads/scripted_workload.h"

#include <filesystem>
#include <mutex>

#include <torch/torch.h>

#include "reports/run_config.h"
#include "reports/user_error.h"
#include "workloads/scripted_module.h"
#include "workloads/tensor_source.h"

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

// Both load_data and build_model need the data (build_model for a sample input); it is read once.
struct ScriptedData {
  std::string data_file;
  std::string eval_data_file;
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
    });
  }
};

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
  w.load_data = [data](const std::string& size) {
    data->load();
    return WorkloadData{limited(data->train, size, 512), limited(data->eval, size, 256)};
  };
  // Each model is read from the file again: fresh leaf parameters (a jit clone's are not leaves).
  w.build_model = [data, model_file = config.model_file] {
    data->load();
    return segment_script(load_trainable_script(model_file), data->train->make_batch(std::vector<int64_t>{0}).input);
  };
  return w;
}

}  // namespace dyno
