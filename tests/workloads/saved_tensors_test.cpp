// Files whose tensor data was cut short (a copy interrupted, a disk error) are refused as damaged
// before any tensor of theirs is read: a model, a data file and a training state's archive.
#include "dyno/workloads/saved_tensors.h"

#include <filesystem>

#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dyno/workloads/scripted_module.h"
#include "dyno/workloads/tensor_source.h"
#include "fixture_files.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;
using testing::fixture;

// A copy of `from` with the storage record data/<key> cut to `bytes`.
std::string cut_short(const std::string& from, const std::string& key, size_t bytes) {
  const std::string to = (std::filesystem::temp_directory_path() / ("dyno_cut_" + std::to_string(::getpid()) + "_" +
                                                                     std::filesystem::path(from).filename().string())).string();
  caffe2::serialize::PyTorchStreamReader reader(from);
  caffe2::serialize::PyTorchStreamWriter writer(to);
  for (const auto& name : reader.getAllRecords()) {
    if (name == "version" || name == ".data/version" || name == ".data/serialization_id" || name == "byteorder") continue;  // the writer's own
    auto [data, size] = reader.getRecord(name);
    writer.writeRecord(name, data.get(), name == "data/" + key ? std::min(bytes, size) : size);
  }
  writer.writeEndOfFile();
  return to;
}

TEST(SavedTensors, AModelWhoseWeightsWereCutShortIsDamaged) {
  EXPECT_NO_THROW(load_trainable_script(fixture("model.pt")));
  const std::string cut = cut_short(fixture("model.pt"), "0", 8);
  const std::string error = error_of([&] { load_trainable_script(cut); });
  EXPECT_EQ(error.rfind("[model] '" + cut + "': its tensors' data holds ", 0), 0u) << error;
  EXPECT_NE(error.find(": the file is damaged (cut short?)"), std::string::npos) << error;
  std::filesystem::remove(cut);
}

TEST(SavedTensors, ADataFileWhoseInputsWereCutShortIsDamaged) {
  const std::string cut = cut_short(fixture("data.pt"), "0", 1000);
  const std::string error = error_of([&] { TensorSource::from_file(cut); });
  EXPECT_EQ(error.rfind("[data] '" + cut + "': its tensors' data holds ", 0), 0u) << error;
  std::filesystem::remove(cut);
}

TEST(SavedTensors, AnArchiveIsCheckedWithTheArchivesNestedInIt) {
  const std::string path = (std::filesystem::temp_directory_path() / ("dyno_state_" + std::to_string(::getpid()) + ".pt")).string();
  torch::serialize::OutputArchive archive, nested;
  nested.write("weight", torch::ones({64, 64}));
  archive.write("model", nested);
  archive.write("step", torch::tensor(3));
  archive.save_to(path);
  auto load = [](const std::string& file) {
    torch::serialize::InputArchive in;
    in.load_from(file);
    require_whole_data(file, tensors_of(in), "config", "'" + file + "'");
  };
  EXPECT_NO_THROW(load(path));
  caffe2::serialize::PyTorchStreamReader reader(path);
  std::string weight_key;  // the larger record: the nested archive's weight
  for (const auto& name : reader.getAllRecords())
    if (name.rfind("data/", 0) == 0 && reader.getRecordSize(name) == 64 * 64 * 4) weight_key = name.substr(5);
  ASSERT_FALSE(weight_key.empty());
  const std::string cut = cut_short(path, weight_key, 100);
  EXPECT_EQ(error_of([&] { load(cut); }), "[config] '" + cut + "': its tensors' data holds 108 bytes where their shapes need 16392: the file is damaged (cut short?)");
  std::filesystem::remove(path);
  std::filesystem::remove(cut);
}

}  // namespace
}  // namespace dyno
