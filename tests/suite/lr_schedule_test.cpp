#include "dyno/suite/lr_schedule.h"

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

TEST(LrSchedule, CosineWarmsUpThenDecaysToZero) {
  LrSchedule s{"cosine", 1.0, 100, 0.1};
  EXPECT_NEAR(s.at(0), 0.1, 1e-12);
  EXPECT_NEAR(s.at(9), 1.0, 1e-12);
  EXPECT_NEAR(s.at(10), 1.0, 1e-12);
  EXPECT_LT(s.at(60), s.at(40));
  EXPECT_NEAR(s.at(100), 0.0, 1e-12);
}

// The rates torch.optim.lr_scheduler.OneCycleLR(max_lr=0.5, total_steps=100) gives steps 0, 29, 30, 50 and 99.
TEST(LrSchedule, OneCycleIsTorchsOneCycle) {
  LrSchedule s{"onecycle", 0.5, 100, 0};
  EXPECT_NEAR(s.at(0), 0.02, 1e-12);
  EXPECT_NEAR(s.at(29), 0.5, 1e-12);
  EXPECT_NEAR(s.at(30), 0.49974826764226216, 1e-12);
  EXPECT_NEAR(s.at(50), 0.396946725287866, 1e-12);
  EXPECT_NEAR(s.at(99), 2e-6, 1e-15);
}

TEST(LrSchedule, ScalingRules) {
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "none", 256, 64), 0.1);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "linear", 256, 64), 0.4);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "sqrt", 256, 64), 0.2);
  EXPECT_THROW(scaled_lr(0.1, "cubic", 256, 64), UserError);
}

}  // namespace
}  // namespace dyno
