#include "dyno/suite/training_state.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "dyno/reports/atomic_file.h"
#include "dyno/reports/user_error.h"
#include "dyno/workloads/saved_tensors.h"

namespace dyno {
namespace {

torch::Tensor text_tensor(const std::string& text) {
  return torch::from_blob(const_cast<char*>(text.data()), {static_cast<int64_t>(text.size())}, torch::kUInt8).clone();
}

std::string tensor_text(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU).contiguous();  // load_from(path, device) put it on the run's device
  return std::string(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()), static_cast<size_t>(c.numel()));
}

torch::Tensor generator_state(const c10::Device& device) {
  auto gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void set_generator_state(const c10::Device& device, const torch::Tensor& state) {
  auto gen = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace

void save_training_state(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         const TrainingProgress& p, const c10::Device& device) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("format", torch::tensor(int64_t{1}));
  archive.write("step", torch::tensor(p.step));
  archive.write("epoch", torch::tensor(p.epoch));
  archive.write("batch_in_epoch", torch::tensor(p.batch_in_epoch));
  archive.write("scaler_scale", torch::tensor(p.scaler_scale, torch::kDouble));
  archive.write("scaler_growth_tracker", torch::tensor(p.scaler_growth_tracker));
  archive.write("elapsed_s", torch::tensor(p.elapsed_s, torch::kDouble));
  archive.write("workload", text_tensor(p.workload));
  archive.write("optimizer_kind", text_tensor(p.optimizer));
  archive.write("data_position", text_tensor(p.data_position));
  archive.write("best_metric", torch::tensor(p.best_metric, torch::kDouble));
  archive.write("evaluations_without_improvement", torch::tensor(p.evaluations_without_improvement));
  archive.write("time_to_target_s", torch::tensor(p.time_to_target_s, torch::kDouble));
  archive.write("rng_cpu", generator_state(c10::Device(c10::kCPU)));
  if (!device.is_cpu()) archive.write("rng_device", generator_state(device));
  // Written as every dyno file is (synced, renamed; a full disk is OutOfSpace, another failure a
  // UserError naming the file, and no temporary file is left), streamed: a state can be large.
  write_file_atomically(path, [&archive](const PieceWriter& write) {
    // (Told every piece was written: a short write would send LibTorch down a path that aborts; the file's error comes after.)
    archive.save_to([&write](const void* data, size_t size) {
      write(data, size);
      return size;
    });
  });
}

namespace {

// The model, the optimizer, the counters and the generators of a state whose workload matched.
void read_progress(const std::string& path, torch::serialize::InputArchive& archive, torch::nn::Module& model,
                   torch::optim::Optimizer& optimizer, const c10::Device& device, TrainingProgress& p) {
  // A fresh tensor per key: read() into a defined tensor re-points that tensor (set_).
  auto read = [&archive](const char* key) {
    torch::Tensor value;
    archive.read(key, value);
    return value;
  };
  // load() takes the saved tensors as they are: a state of a model with the same names and other
  // shapes would load, then fail (or train the saved shapes).
  auto shapes = [&model] {
    std::map<std::string, std::vector<int64_t>> by_name;
    for (const auto& parameter : model.named_parameters()) by_name[parameter.key()] = parameter.value().sizes().vec();
    for (const auto& buffer : model.named_buffers()) by_name[buffer.key()] = buffer.value().sizes().vec();
    return by_name;
  };
  const auto expected = shapes();
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  model.load(model_archive);
  for (const auto& [name, shape] : shapes())
    if (shape != expected.at(name))
      throw UserError("config", "resume_state: '" + path + "' holds " + name + " of shape " + c10::str(c10::IntArrayRef(shape)) +
                                    ", this run's model has " + c10::str(c10::IntArrayRef(expected.at(name))) + " (another model size?)");
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  p.step = read("step").item<int64_t>();
  p.epoch = read("epoch").item<int64_t>();
  p.batch_in_epoch = read("batch_in_epoch").item<int64_t>();
  p.scaler_scale = read("scaler_scale").item<double>();
  p.scaler_growth_tracker = read("scaler_growth_tracker").item<int64_t>();
  p.elapsed_s = read("elapsed_s").item<double>();
  // (A state saved before dyno recorded the evaluations has none: they start afresh.)
  if (torch::Tensor value; archive.try_read("best_metric", value)) p.best_metric = value.item<double>();
  if (torch::Tensor value; archive.try_read("evaluations_without_improvement", value)) p.evaluations_without_improvement = value.item<int64_t>();
  if (torch::Tensor value; archive.try_read("time_to_target_s", value)) p.time_to_target_s = value.item<double>();
  set_generator_state(c10::Device(c10::kCPU), read("rng_cpu").cpu());
  if (!device.is_cpu()) {
    torch::Tensor rng_device;
    if (!archive.try_read("rng_device", rng_device))
      throw UserError("config", "resume_state: '" + path + "' was saved on the CPU (it has no device generator state); resume it with device=cpu");
    set_generator_state(device, rng_device.cpu());
  }
}

}  // namespace

TrainingProgress load_training_state(const std::string& path, torch::nn::Module& model,
                                     torch::optim::Optimizer& optimizer, const std::string& workload,
                                     const std::string& optimizer_kind, const c10::Device& device) {
  if (!std::filesystem::exists(path))
    throw UserError("config", "resume_state: '" + path + "' does not exist; give a file written with save_state");
  if (std::filesystem::is_directory(path)) throw UserError("config", "resume_state: '" + path + "' is a folder; give a file written with save_state");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    throw UserError("config", "resume_state: '" + path + "' is not a dyno training state: " + e.what_without_backtrace());
  }
  require_whole_data(path, tensors_of(archive), "config", "resume_state: '" + path + "'");
  torch::Tensor t;
  TrainingProgress p;
  try {
    archive.read("workload", t);
  } catch (const c10::Error&) {
    throw UserError("config", "resume_state: '" + path + "' is not a dyno training state (it has no workload); give a file written with save_state");
  }
  p.workload = tensor_text(t);
  if (p.workload != workload)
    throw UserError("config", "resume_state: '" + path + "' holds a '" + p.workload + "' run, not '" + workload + "'");
  if (torch::Tensor kind; archive.try_read("optimizer_kind", kind)) p.optimizer = tensor_text(kind);
  if (torch::Tensor position; archive.try_read("data_position", position)) p.data_position = tensor_text(position);
  if (!p.optimizer.empty() && p.optimizer != optimizer_kind)
    throw UserError("config", "resume_state: '" + path + "' holds an " + p.optimizer + " optimizer's state, not " + optimizer_kind +
                                  "'s; resume with --set optimizer=" + p.optimizer);
  try {
    read_progress(path, archive, model, optimizer, device, p);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    throw UserError("config", "resume_state: '" + path + "' does not fit this run's model and optimizer (saved with another optimizer, "
                              "model size or dyno version?): " + what.substr(0, what.find('\n')));
  }
  return p;
}

}  // namespace dyno
