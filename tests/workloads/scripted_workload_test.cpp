// The torchscript workload: a user's scripted model on data saved from Python, named by the config.
#include "dyno/workloads/scripted_workload.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixture_files.h"
#include "dyno/reports/run_config.h"
#include "user_error_matcher.h"
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
