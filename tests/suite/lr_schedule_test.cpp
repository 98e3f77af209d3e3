#include "dyno/suite/lr_schedule.h"

#include <gtest/gtest.h>

#include <vector>

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

// The rates torch.optim.lr_scheduler.OneCycleLR(max_lr=0.5, total_steps=T) gives (T = 100: steps 0, 29, 30, 50 and 99).
TEST(LrSchedule, OneCycleIsTorchsOneCycle) {
  LrSchedule s{"onecycle", 0.5, 100, 0};
  EXPECT_NEAR(s.at(0), 0.02, 1e-12);
  EXPECT_NEAR(s.at(29), 0.5, 1e-12);
  EXPECT_NEAR(s.at(30), 0.49974826764226216, 1e-12);
  EXPECT_NEAR(s.at(50), 0.396946725287866, 1e-12);
  EXPECT_NEAR(s.at(99), 2e-6, 1e-15);
  // Short runs too: 5 steps, and 3, whose peak comes before the first step.
  const std::vector<double> five = {0.02, 0.47524231600673683, 0.30563101096814466, 0.09412917302511849, 2e-6};
  const std::vector<double> three = {0.49720771772545586, 0.23131855133348753, 2e-6};
  for (size_t i = 0; i < five.size(); ++i) EXPECT_NEAR((LrSchedule{"onecycle", 0.5, 5, 0}.at(static_cast<int64_t>(i))), five[i], 1e-12) << i;
  for (size_t i = 0; i < three.size(); ++i) EXPECT_NEAR((LrSchedule{"onecycle", 0.5, 3, 0}.at(static_cast<int64_t>(i))), three[i], 1e-12) << i;
}

TEST(LrSchedule, ScalingRules) {
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "none", 256, 64), 0.1);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "linear", 256, 64), 0.4);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "sqrt", 256, 64), 0.2);
  EXPECT_THROW(scaled_lr(0.1, "cubic", 256, 64), UserError);
}

}  // namespace
}  // namespace dyno
