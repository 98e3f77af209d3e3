#include "dyno/workloads/workload_registry.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dyno/reports/user_error.h"
#include "user_error_matcher.h"

namespace dyno {
namespace {

TEST(Workload, RegistryHasTheReferenceWorkloads) {
  for (const char* name : {"fashion-mlp", "fashion-cnn", "fashion-mobilenet", "text-transformer"})
    EXPECT_EQ(workload_or_throw(name).name, name);
  EXPECT_THROW(workload_or_throw("imagenet"), UserError);
}

// A metric the engine does not evaluate, or one the wrong way up, would stop every run at its first
// evaluation as if the target were reached: the binary refuses to start, naming the file.
TEST(Workload, AMetricTheEngineDoesNotEvaluateOrTheWrongWayUpIsRefused) {
  Workload w = workload_or_throw("fashion-mlp");
  check_registrable(w, "mine.cpp");
  w.metric_name = "f1";
  EXPECT_EQ(testing::error_of([&] { check_registrable(w, "mine.cpp"); }),
            "[workload] 'fashion-mlp' (in mine.cpp): metric_name 'f1' is not one of accuracy, val_loss (the two the engine evaluates)");
  w.metric_name = "val_loss";
  EXPECT_EQ(testing::error_of([&] { check_registrable(w, "mine.cpp"); }),
            "[workload] 'fashion-mlp' (in mine.cpp): metric_name val_loss with higher_is_better true; accuracy is higher-is-better, "
            "val_loss lower-is-better");
  w.higher_is_better = false;
  check_registrable(w, "mine.cpp");
}

// A target out of the metric's range, or a recipe field no run can train with, is refused when the
// binary starts, naming the field; 0 is a workload without a target.
TEST(Workload, ATargetOrRecipeOutOfRangeIsRefused) {
  Workload w = workload_or_throw("fashion-mlp");
  w.target = 0;
  check_registrable(w, "mine.cpp");
  w.target = 90;  // a percentage
  EXPECT_EQ(testing::error_of([&] { check_registrable(w, "mine.cpp"); }),
            "[workload] 'fashion-mlp' (in mine.cpp): target 90.0 is not an accuracy in (0, 1], nor 0 (no target)");
  w = workload_or_throw("fashion-mlp");
  w.recipe.optimizer = "adam";
  EXPECT_EQ(testing::error_of([&] { check_registrable(w, "mine.cpp"); }),
            "[workload] 'fashion-mlp' (in mine.cpp): recipe.optimizer is \"adam\"; give sgd or adamw");
  w = workload_or_throw("fashion-mlp");
  w.recipe.epochs = 0;
  EXPECT_EQ(testing::error_of([&] { check_registrable(w, "mine.cpp"); }), "[workload] 'fashion-mlp' (in mine.cpp): recipe.epochs is 0; give 1 or more");
  w = workload_or_throw("fashion-mlp");
  w.recipe.reference_batch_size = 0;  // lr_scaling would divide by it
  EXPECT_NE(testing::error_of([&] { check_registrable(w, "mine.cpp"); }).find("recipe.reference_batch_size is 0"), std::string::npos);
  w = workload_or_throw("fashion-mlp");
  w.recipe.lr = 0;
  EXPECT_NE(testing::error_of([&] { check_registrable(w, "mine.cpp"); }).find("recipe.lr is 0.0; give a positive learning rate"), std::string::npos);
}

TEST(Workload, TheDefaultWorkloadIsFashionMlpWhereItIsRegistered) { EXPECT_EQ(default_workload(), "fashion-mlp"); }

TEST(Workload, EachModelMapsABatchToClassScores) {
  for (const auto& w : all_workloads()) {
    WorkloadData data = w.load_data("tiny");
    ASSERT_GT(data.train->size(), 16) << w.name;
    Batch batch = data.train->make_batch({0, 1, 2, 3});
    SegmentedModel model = w.build_model();
    auto out = model->forward(batch.input);
    EXPECT_EQ(out.size(0), 4) << w.name;
    if (w.throughput_unit == "tokens") {
      EXPECT_EQ(out.sizes(), torch::IntArrayRef({4, 64, 96}));
      EXPECT_EQ(batch.items, 4 * 64);
      // The target is the input shifted by one token.
      EXPECT_TRUE(torch::equal(batch.input.narrow(1, 1, 63), batch.target.narrow(1, 0, 63)));
    } else {
      EXPECT_EQ(out.sizes(), torch::IntArrayRef({4, 10}));
      EXPECT_NEAR(data.train->make_batch({0, 1, 2, 3, 4, 5, 6, 7}).input.mean().item<double>(), 0.0, 0.5);
    }
  }
}

TEST(Workload, ConvNetHasNoConvBiasBeforeBatchNorm) {
  SegmentedModel model = workload_or_throw("fashion-cnn").build_model();
  for (const auto& item : model->named_parameters())
    if (item.key().find(".0.") != std::string::npos && item.value().dim() == 1)
      ADD_FAILURE() << "conv bias present: " << item.key();
}

}  // namespace
}  // namespace dyno
