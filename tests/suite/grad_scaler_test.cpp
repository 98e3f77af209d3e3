#include "suite/grad_scaler.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace dyno {
namespace {

TEST(GradScaler, ScalesLossAndUnscalesGradients) {
  GradScaler scaler({/*init_scale=*/1024, 2, 0.5, 2000});
  auto w = torch::ones({3}, torch::requires_grad());
  scaler.scale_loss((w * 2).sum()).backward();
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 2048.0)));
  EXPECT_FALSE(scaler.unscale({w}));
  EXPECT_TRUE(torch::allclose(w.grad(), torch::full({3}, 2.0)));
}

TEST(GradScaler, InfSkipsTheStepAndBacksOff) {
  GradScaler scaler({65536, 2, 0.5, 2000});
  auto w = torch::ones({2}, torch::requires_grad());
  torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.1));
  w.mutable_grad() = torch::tensor({1.0f, std::numeric_limits<float>::infinity()});
  const bool found_inf = scaler.unscale({w});
  EXPECT_TRUE(found_inf);
  if (!found_inf) sgd.step();
  scaler.update(found_inf);
  EXPECT_TRUE(torch::equal(w.detach(), torch::ones({2})));  // parameters untouched
  EXPECT_DOUBLE_EQ(scaler.scale(), 32768);
  EXPECT_EQ(scaler.skipped_steps(), 1);
  w.mutable_grad() = torch::tensor({1.0f, std::nanf("")});
  EXPECT_TRUE(scaler.unscale({w}));
}

TEST(GradScaler, GrowsAfterIntervalOfCleanSteps) {
  GradScaler scaler({8, 2, 0.5, /*growth_interval=*/3});
  for (int i = 0; i < 2; ++i) scaler.update(false);
  EXPECT_DOUBLE_EQ(scaler.scale(), 8);
  scaler.update(false);
  EXPECT_DOUBLE_EQ(scaler.scale(), 16);
  EXPECT_EQ(scaler.growth_tracker(), 0);
  scaler.update(false);
  scaler.update(true);  // an overflow resets the run of clean steps
  EXPECT_DOUBLE_EQ(scaler.scale(), 8);
  EXPECT_EQ(scaler.growth_tracker(), 0);
}

}  // namespace
}  // namespace dyno
