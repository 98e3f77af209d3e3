#include "suite/training_state.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <torch/torch.h>

#include "reports/user_error.h"

namespace dyno {
namespace {

torch::Tensor text_tensor(const std::string& text) {
  return torch::from_blob(const_cast<char*>(text.data()), {static_cast<int64_t>(text.size())}, torch::kUInt8).clone();
}

std::string tensor_text(const torch::Tensor& t) {
  auto c = t.contiguous();
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
  archive.write("rng_cpu", generator_state(c10::Device(c10::kCPU)));
  if (!device.is_cpu()) archive.write("rng_device", generator_state(device));
  std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  archive.save_to(temp);
  if (std::rename(temp.c_str(), path.c_str()) != 0) throw UserError("state", "cannot rename '" + temp + "' to '" + path + "'");
}

TrainingProgress load_training_state(const std::string& path, torch::nn::Module& model,
                                     torch::optim::Optimizer& optimizer, const std::string& workload,
                                     const c10::Device& device) {
  if (!std::filesystem::exists(path))
    throw UserError("config", "resume_state: '" + path + "' does not exist; give a file written with save_state");
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, device);
  } catch (const c10::Error& e) {
    throw UserError("config", "resume_state: '" + path + "' is not a dyno training state: " + e.what_without_backtrace());
  }
  torch::Tensor t;
  TrainingProgress p;
  archive.read("workload", t);
  p.workload = tensor_text(t);
  if (p.workload != workload)
    throw UserError("config", "resume_state: '" + path + "' holds a '" + p.workload + "' run, not '" + workload + "'");
  torch::serialize::InputArchive model_archive;
  archive.read("model", model_archive);
  model.load(model_archive);
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  optimizer.load(optimizer_archive);
  archive.read("step", t);
  p.step = t.item<int64_t>();
  archive.read("epoch", t);
  p.epoch = t.item<int64_t>();
  archive.read("batch_in_epoch", t);
  p.batch_in_epoch = t.item<int64_t>();
  archive.read("scaler_scale", t);
  p.scaler_scale = t.item<double>();
  archive.read("scaler_growth_tracker", t);
  p.scaler_growth_tracker = t.item<int64_t>();
  archive.read("elapsed_s", t);
  p.elapsed_s = t.item<double>();
  archive.read("rng_cpu", t);
  set_generator_state(c10::Device(c10::kCPU), t.cpu());
  if (!device.is_cpu()) {
    archive.read("rng_device", t);
    set_generator_state(device, t.cpu());
  }
  return p;
}

}  // namespace dyno
