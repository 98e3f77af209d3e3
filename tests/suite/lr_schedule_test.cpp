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

TEST(LrSchedule, OneCyclePeaksAtThirtyPercent) {
  LrSchedule s{"onecycle", 0.5, 100, 0};
  EXPECT_NEAR(s.at(0), 0.5 / 25, 1e-12);
  EXPECT_NEAR(s.at(30), 0.5, 1e-12);
  EXPECT_LT(s.at(100), 1e-5);
}

TEST(LrSchedule, ScalingRules) {
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "none", 256, 64), 0.1);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "linear", 256, 64), 0.4);
  EXPECT_DOUBLE_EQ(scaled_lr(0.1, "sqrt", 256, 64), 0.2);
  EXPECT_THROW(scaled_lr(0.1, "cubic", 256, 64), UserError);
}

}  // namespace
}  // namespace dyno
