#include "dyno/suite/grad_scaler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "dyno/suite/training_optimizer.h"

namespace dyno {
namespace {

bool flagged(const torch::Tensor& found_inf) { return found_inf.item<float>() != 0; }

torch::Tensor flag(bool inf) { return torch::full({}, inf ? 1.0 : 0.0); }

TEST(GradScaler, ScalesLossAndUnscalesGradients) {
  GradScaler scaler({/*init_scale=*/1024, 2, 0.5, 2000});
  auto w = torch::ones({3}, torch::requires_grad());
  scaler.scale_loss((w * 2).sum()).backward();
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 2048.0)));
  EXPECT_FALSE(flagged(scaler.unscale({w})));
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 2.0)));
}

TEST(GradScaler, InfSkipsTheFusedStepWithoutAHostDecisionAndBacksOff) {
  GradScaler scaler({65536, 2, 0.5, 2000});
  auto w = torch::ones({2}, torch::requires_grad());
  TrainingOptimizer sgd({w}, {"sgd", "fused", 0.1, 0.9, 0});
  w.mutable_grad() = torch::tensor({1.0f, std::numeric_limits<float>::infinity()});
  const auto found_inf = scaler.unscale({w});
  sgd.step(found_inf);
  scaler.update(found_inf);
  EXPECT_TRUE(torch::equal(w.detach(), torch::ones({2})));  // parameters untouched
  EXPECT_DOUBLE_EQ(scaler.scale(), 32768);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  w.mutable_grad() = torch::tensor({1.0f, std::nanf("")});
  EXPECT_TRUE(flagged(scaler.unscale({w})));
}

TEST(GradScaler, GrowsAfterIntervalOfCleanSteps) {
  GradScaler scaler({8, 2, 0.5, /*growth_interval=*/3});
  for (int i = 0; i < 2; ++i) scaler.update(flag(false));
  EXPECT_DOUBLE_EQ(scaler.scale(), 8);
  scaler.update(flag(false));
  EXPECT_DOUBLE_EQ(scaler.scale(), 16);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  scaler.update(flag(false));
  scaler.update(flag(true));  // an overflow resets the run of clean steps
  EXPECT_DOUBLE_EQ(scaler.scale(), 8);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  EXPECT_EQ(scaler.skipped_steps(), 1);
}

TEST(GradScaler, RestoresItsScaleAndTracker) {
  GradScaler scaler;
  scaler.restore(512, 7);
  EXPECT_DOUBLE_EQ(scaler.scale(), 512);
  EXPECT_EQ(scaler.growth_tracker(), 7);
}

}  // namespace
}  // namespace dyno
