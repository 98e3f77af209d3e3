#include "dyno/workloads/saved_tensors.h"

#include <set>

#include <caffe2/serialize/inline_container.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

void gather(torch::serialize::InputArchive& archive, std::vector<torch::Tensor>& out) {
  for (const auto& key : archive.keys()) {
    torch::Tensor tensor;
    torch::serialize::InputArchive nested;
    if (archive.try_read(key, tensor)) out.push_back(tensor);
    else if (archive.try_read(key, nested)) gather(nested, out);
  }
}

}  // namespace

void require_whole_data(const std::string& path, const std::vector<torch::Tensor>& tensors, const std::string& area, const std::string& origin) {
  size_t held = 0, needed = 0;
  caffe2::serialize::PyTorchStreamReader reader(path);
  for (const auto& record : reader.getAllRecords())  // each storage's data: data/<key>
    if (record.rfind("data/", 0) == 0) held += reader.getRecordSize(record);
  std::set<const void*> counted;
  for (const auto& t : tensors)
    if (t.defined() && t.has_storage() && counted.insert(t.storage().unsafeGetStorageImpl()).second) needed += t.storage().nbytes();
  if (held < needed)
    throw UserError(area, origin + ": its tensors' data holds " + std::to_string(held) + " bytes where their shapes need " + std::to_string(needed) +
                              ": the file is damaged (cut short?)");
}

std::vector<torch::Tensor> tensors_of(torch::serialize::InputArchive& archive) {
  std::vector<torch::Tensor> out;
  gather(archive, out);
  return out;
}

std::vector<torch::Tensor> tensors_of(const torch::jit::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& attribute : module.named_attributes(/*recurse=*/true))
    if (attribute.value.isTensor()) out.push_back(attribute.value.toTensor());
  return out;
}

}  // namespace dyno
