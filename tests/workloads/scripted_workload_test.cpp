// The torchscript workload: a user's scripted model on data saved from Python, named by the config.
#include "dyno/workloads/scripted_workload.h"

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_files.h"
#include "dyno/reports/run_config.h"
#include "user_error_matcher.h"
#include "dyno/workloads/tensor_source.h"
#include "dyno/workloads/workload_registry.h"

namespace dyno {
namespace {

using testing::error_of;
using testing::fixture;

RunConfig scripted_config(const std::string& model, const std::string& data) {
  RunConfig config;
  config.workload = kTorchScriptWorkload;
  config.model_file = fixture(model);
  config.data_file = fixture(data);
  return config;
}

TEST(ScriptedWorkload, HoldsOutTheDataFilesLastTenthForEvaluation) {
  Workload w = workload_for(scripted_config("model.pt", "data.pt"));
  EXPECT_EQ(w.name, "torchscript");
  EXPECT_EQ(w.metric_name, "accuracy");
  EXPECT_TRUE(w.convolutional);
  WorkloadData data = w.load_data("full");
  EXPECT_EQ(data.train->size(), 2160);
  EXPECT_EQ(data.eval->size(), 240);
  WorkloadData tiny = w.load_data("tiny");
  EXPECT_EQ(tiny.train->size(), 512);
  SegmentedModel model = w.build_model();
  EXPECT_EQ(model->segments().size(), 3u);
  EXPECT_EQ(model->forward(tiny.eval->make_batch({0, 1}).input).sizes(), torch::IntArrayRef({2, 10}));
}

TEST(ScriptedWorkload, AHeldOutTenthWithFewOfTheClassesIsWarnedAbout) {
  // data.pt's examples sorted by class: its last tenth holds one or two of the ten classes.
  const auto data = TensorSource::from_file(fixture("data.pt"));
  const torch::Tensor order = data->targets().argsort(/*stable=*/true);
  auto dict = c10::Dict<std::string, torch::Tensor>();
  dict.insert("inputs", data->inputs().index_select(0, order));
  dict.insert("targets", data->targets().index_select(0, order));
  const std::string sorted = ::testing::TempDir() + "sorted_data.pt";
  {
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
    std::ofstream(sorted, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  RunConfig config = scripted_config("model.pt", "data.pt");
  config.data_file = sorted;
  ::testing::internal::CaptureStderr();
  workload_for(config).load_data("full");
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("of the file's 10 classes (in a random order about 10): is the file sorted by class?"), std::string::npos) << warned;
  ::testing::internal::CaptureStderr();
  workload_for(scripted_config("model.pt", "data.pt")).load_data("full");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  // A thousand classes: a held-out 240 examples can hold at most 240 of them, and do here.
  auto many = c10::Dict<std::string, torch::Tensor>();
  many.insert("inputs", data->inputs());
  many.insert("targets", torch::arange(data->size()) % 1000);
  {
    const std::vector<char> bytes = torch::pickle_save(c10::IValue(many));
    std::ofstream(sorted, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ::testing::internal::CaptureStderr();
  workload_for(config).load_data("full");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  std::remove(sorted.c_str());
}

TEST(ScriptedWorkload, EvaluatesOnAnEvalDataFileWhenGiven) {
  RunConfig config = scripted_config("tree.pt", "data.pt");
  config.eval_data_file = fixture("mixed.pt");
  Workload w = workload_for(config);
  EXPECT_FALSE(w.convolutional);
  WorkloadData data = w.load_data("full");
  EXPECT_EQ(data.train->size(), 2400);
  EXPECT_EQ(data.eval->size(), 64);
}

TEST(ScriptedWorkload, MseLossIsJudgedByValidationLoss) {
  RunConfig config = scripted_config("regressor.pt", "regression.pt");
  config.model_loss = "mse";
  Workload w = workload_for(config);
  EXPECT_EQ(w.metric_name, "val_loss");
  EXPECT_FALSE(w.higher_is_better);
  ASSERT_TRUE(w.loss);
  auto output = torch::tensor({{1.0}, {3.0}}), target = torch::tensor({2.0, 2.0});
  EXPECT_DOUBLE_EQ(w.loss(output, target).item<double>(), 1.0);
}

TEST(ScriptedWorkload, MissingFilesAndMismatchedKnobsAreNamed) {
  RunConfig no_model;
  no_model.workload = kTorchScriptWorkload;
  EXPECT_EQ(error_of([&] { workload_for(no_model); }),
            "[config] model_file: empty; workload=torchscript trains a scripted model: give --model model.pt (model_file)");
  RunConfig no_data = scripted_config("model.pt", "data.pt");
  no_data.data_file.clear();
  EXPECT_NE(error_of([&] { workload_for(no_data); }).find("[config] data_file: empty; workload=torchscript needs --data data.pt"),
            std::string::npos);
  RunConfig wrong_workload = scripted_config("model.pt", "data.pt");
  wrong_workload.workload = "fashion-mlp";
  EXPECT_NE(error_of([&] { workload_for(wrong_workload); }).find("model_file: '" + fixture("model.pt") + "' is set but workload is 'fashion-mlp'"),
            std::string::npos);
  Workload missing_key = workload_for(scripted_config("model.pt", "no_targets.pt"));  // the data is read when the run asks
  EXPECT_NE(error_of([&] { missing_key.load_data("full"); }).find("has no key 'targets'"), std::string::npos);
}

}  // namespace
}  // namespace dyno
