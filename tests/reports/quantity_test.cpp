#include "reports/quantity.h"

#include <gtest/gtest.h>

#include "reports/user_error.h"

namespace dyno {
namespace {

TEST(Quantity, ParsesUnitsAndNamesTheFlagOnError) {
  EXPECT_DOUBLE_EQ(parse_duration_s("90s", "tune", "--budget"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("10m", "tune", "--budget"), 600);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5h", "tune", "--budget"), 5400);
  EXPECT_DOUBLE_EQ(parse_bytes("512M", "tune", "--memory-limit"), 512.0 * 1048576);
  EXPECT_DOUBLE_EQ(parse_fraction("5%", "check", "--threshold"), 0.05);
  EXPECT_DOUBLE_EQ(parse_fraction("0", "check", "--threshold"), 0);
  try {
    parse_duration_s("10 minutes", "tune", "--budget");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "[tune] --budget: '10 minutes' is not a duration like 90s, 10m or 1.5h");
  }
  EXPECT_THROW(parse_bytes("-2G", "tune", "--memory-limit"), UserError);
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(-1), "?");
}

}  // namespace
}  // namespace dyno
