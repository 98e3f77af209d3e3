#include "dyno/workloads/tensor_source.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/import_read.h>
#include <torch/torch.h>

#include "dyno/reports/user_error.h"
#include "dyno/workloads/saved_tensors.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

// Data, not parameters: a tensor saved with requires_grad (features computed outside no_grad) is
// detached, or every batch would hold the graph back to it.
torch::Tensor normalised(torch::Tensor t, const std::string& origin, const std::string& name) {
  t = t.detach();
  if (t.is_floating_point()) return t.to(torch::kFloat).contiguous();
  if (t.is_complex() || t.scalar_type() == torch::kBool)
    throw UserError("data", origin + ": " + name + " is " + std::string(c10::toString(t.scalar_type())) +
                                "; expected floating values or integer indices");
  return t.to(torch::kLong).contiguous();
}

// The top-level object of a torch.save zip file, read in place (no copy of the whole file).
c10::IValue read_saved_object(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw UserError("data", "'" + path + "' does not exist or is not a file; write it with torch.save({\"inputs\": X, \"targets\": Y}, path)");
  {
    std::ifstream probe(path, std::ios::binary);
    char magic[2] = {0, 0};
    probe.read(magic, 2);
    if (!probe || magic[0] != 'P' || magic[1] != 'K')
      throw UserError("data", "'" + path + "' is not a torch.save file (zip format); write it with torch.save(dict, path) " +
                                  "(the default format since torch 1.6, not _use_new_zipfile_serialization=False)");
  }
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    return torch::jit::readArchiveAndTensors("data", "", "", std::nullopt, std::nullopt, torch::Device(torch::kCPU), reader);
  } catch (const c10::Error& e) {
    throw UserError("data", "'" + path + "' could not be read as a torch.save file: " + e.what_without_backtrace());
  }
}

}  // namespace

TensorSource::TensorSource(torch::Tensor inputs, torch::Tensor targets, const std::string& origin) {
  if (!inputs.defined() || !targets.defined()) throw UserError("data", origin + ": inputs and targets must both be tensors");
  if (inputs.dim() < 1 || targets.dim() < 1)
    throw UserError("data", origin + ": inputs " + shape_text(inputs) + " and targets " + shape_text(targets) +
                                " need a first dimension that counts the examples");
  if (inputs.size(0) != targets.size(0))
    throw UserError("data", origin + ": inputs have " + std::to_string(inputs.size(0)) + " examples " + shape_text(inputs) +
                                " but targets have " + std::to_string(targets.size(0)) + " " + shape_text(targets) + "; they must match");
  if (inputs.size(0) == 0) throw UserError("data", origin + ": holds no examples");
  inputs_ = normalised(inputs.cpu(), origin, "inputs");
  targets_ = normalised(targets.cpu(), origin, "targets");
}

std::shared_ptr<TensorSource> TensorSource::from_file(const std::string& path, const std::string& inputs_key,
                                                      const std::string& targets_key) {
  const c10::IValue saved = read_saved_object(path);
  if (!saved.isGenericDict())
    throw UserError("data", "'" + path + "' holds a " + saved.type()->str() + "; expected a dict {\"" + inputs_key + "\": tensor, \"" +
                                targets_key + "\": tensor}");
  const auto dict = saved.toGenericDict();
  auto tensor_at = [&](const std::string& key) {
    auto found = dict.find(key);
    if (found == dict.end()) {
      std::string keys;
      for (const auto& entry : dict)
        keys += (keys.empty() ? "" : ", ") + (entry.key().isString() ? "'" + entry.key().toStringRef() + "'" : entry.key().type()->str());
      throw UserError("data", "'" + path + "' has no key '" + key + "' (it has " + (keys.empty() ? "none" : keys) + "); save a dict {\"" +
                                  inputs_key + "\": X, \"" + targets_key + "\": Y}");
    }
    if (!found->value().isTensor())
      throw UserError("data", "'" + path + "' key '" + key + "' holds a " + found->value().type()->str() + "; expected a tensor");
    return found->value().toTensor();
  };
  const torch::Tensor inputs = tensor_at(inputs_key), targets = tensor_at(targets_key);
  require_whole_data(path, {inputs, targets}, "data", "'" + path + "'");
  return std::make_shared<TensorSource>(inputs, targets, "'" + path + "'");
}

int64_t TensorSource::size() const { return inputs_.size(0); }

Batch TensorSource::make_batch(const std::vector<int64_t>& indices) const {
  const auto index = torch::tensor(indices, torch::kLong);  // its own memory: a graph may keep it past this call
  Batch batch;
  batch.input = inputs_.index_select(0, index);
  batch.target = targets_.index_select(0, index);
  batch.items = static_cast<int64_t>(indices.size());
  return batch;
}

std::shared_ptr<TensorSource> TensorSource::slice(int64_t begin, int64_t count) const {
  return std::make_shared<TensorSource>(inputs_.narrow(0, begin, count), targets_.narrow(0, begin, count));
}

}  // namespace dyno
