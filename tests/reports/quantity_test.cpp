#include "dyno/reports/quantity.h"

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"
#include "user_error_matcher.h"

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
    EXPECT_STREQ(e.what(), "[tune] --budget: '10 minutes' is not a duration like 90s, 10m, 1.5h or 1m30s");
  }
  EXPECT_THROW(parse_bytes("-2G", "tune", "--memory-limit"), UserError);
  EXPECT_THROW(parse_duration_s("nan", "tune", "--budget"), UserError);
  EXPECT_THROW(parse_fraction("inf%", "check", "--threshold"), UserError);
}

// A value past what its use can hold, or a bare fraction meant as a percentage, is refused by name.
TEST(Quantity, RefusesValuesBeyondTheirUseWithTheLimit) {
  EXPECT_EQ(testing::error_of([] { parse_fraction("5", "check", "--threshold"); }),
            "[check] --threshold: '5' is a fraction above 1 (500%); write 5% for 5 per cent, or 0.05");
  EXPECT_EQ(testing::error_of([] { parse_fraction("2", "check", "--threshold"); }),
            "[check] --threshold: '2' is a fraction above 1 (200%); write 2% for 2 per cent, or 0.02");
  EXPECT_DOUBLE_EQ(parse_fraction("150%", "check", "--threshold"), 1.5);
  EXPECT_DOUBLE_EQ(parse_fraction("1", "check", "--threshold"), 1);
  EXPECT_EQ(testing::error_of([] { parse_bytes("1e10G", "tune", "--memory-limit"); }),
            "[tune] --memory-limit: '1e10G' is more bytes than a size holds (2^63); give at most 8589934591G");
  EXPECT_DOUBLE_EQ(parse_bytes("8589934591G", "tune", "--memory-limit"), 8589934591.0 * 1073741824);
  EXPECT_EQ(testing::error_of([] { parse_bytes("1.5", "tune", "--memory-limit"); }),
            "[tune] --memory-limit: '1.5' is under 1 MiB, which no training process fits in; give a unit, as 1.5G or 512M");
  EXPECT_EQ(testing::error_of([] { parse_duration_s("1e20s", "tune", "--budget"); }),
            "[tune] --budget: '1e20s' is more than a year; give at most 8784h");
  EXPECT_EQ(format_duration(1e20), "?");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(-1), "?");
}

// What dyno prints it also reads: a duration of parts (1m30s, 1h05m); sizes in the spellings of
// other tools (2g, 2GB), all binary.
TEST(Quantity, ReadsCompoundDurationsAndCommonSizeSpellings) {
  EXPECT_DOUBLE_EQ(parse_duration_s("1m30s", "tune", "--budget"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s(format_duration(3720), "tune", "--budget"), 3720);
  EXPECT_DOUBLE_EQ(parse_duration_s("1m0s", "tune", "--budget"), 60);
  EXPECT_THROW(parse_duration_s("1h30", "tune", "--budget"), UserError);
  EXPECT_THROW(parse_duration_s("1h30m5", "tune", "--budget"), UserError);  // every part names its unit
  EXPECT_THROW(parse_duration_s("1ms", "tune", "--budget"), UserError);
  EXPECT_DOUBLE_EQ(parse_duration_s("0m30s", "tune", "--budget"), 30);
  for (const char* odd : {"30s1m", "1m1m", "0m0s", "5s.5s"}) EXPECT_THROW(parse_duration_s(odd, "tune", "--budget"), UserError) << odd;
  for (const char* two_gib : {"2G", "2g", "2GB", "2GiB"}) EXPECT_DOUBLE_EQ(parse_bytes(two_gib, "tune", "--memory-limit"), 2.0 * 1073741824) << two_gib;
  EXPECT_DOUBLE_EQ(parse_bytes("512MB", "tune", "--memory-limit"), 512.0 * 1048576);
}

}  // namespace
}  // namespace dyno
