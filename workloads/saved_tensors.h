// Checks that the tensors read from a file have the bytes their shapes need. LibTorch's readers
// size a stored tensor's memory by the shape the file states and fill it with the data the file
// holds: a file whose data was cut short (a copy interrupted, a disk error, a hand-made file) gives
// tensors that reach past their data, a crash or garbage at the first use.
#pragma once

#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/serialize/input-archive.h>
#include <torch/torch.h>

namespace dyno {

// Throws UserError in `area` when the data records of `path` (a torch.save or TorchScript zip
// file) hold fewer bytes than the distinct storages of `tensors`, read from it, state:
// "ORIGIN: its tensors' data holds N bytes where their shapes need M: the file is damaged".
void require_whole_data(const std::string& path, const std::vector<torch::Tensor>& tensors, const std::string& area, const std::string& origin);
// Every tensor in the archive and the archives nested in it (a training state's model, optimizer).
std::vector<torch::Tensor> tensors_of(torch::serialize::InputArchive& archive);
// Every tensor attribute of the module and its submodules (parameters, buffers).
std::vector<torch::Tensor> tensors_of(const torch::jit::Module& module);

}  // namespace dyno
