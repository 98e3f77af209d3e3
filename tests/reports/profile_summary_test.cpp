#include "dyno/reports/profile_summary.h"

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

OpRow row(const std::string& name, double self_s) { return {name, 2, self_s, self_s * 2, 0, "[[1]]"}; }

TEST(ProfileSummary, RowsPastTheTopBecomeOneOtherRowWithTheirSums) {
  const auto rows = top_rows({row("aten::c", 0.1), row("aten::a", 0.3), row("aten::b", 0.2), row("aten::d", 0.05)}, 2);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "aten::a");
  EXPECT_EQ(rows[1].name, "aten::b");
  EXPECT_EQ(rows[2].name, "[other]");
  EXPECT_EQ(rows[2].calls, 4);
  EXPECT_DOUBLE_EQ(rows[2].self_s, 0.15);
  ProfileSummary p;
  p.ops = rows;
  EXPECT_DOUBLE_EQ(p.table_self_s(), 0.65);  // nothing is lost by folding
}

TEST(ProfileSummary, RoundTripsThroughJson) {
  ProfileSummary p;
  p.steps = 5;
  p.wall_s = 0.05;
  p.trace_path = "runs/trace.json";
  p.ops = {row("aten::addmm", 0.02)};
  p.kernels = {row("sgemm", 0.01)};
  p.ops_s = 0.04;
  p.op_calls = 900;
  p.gemm_s = 0.03;
  p.gemm_flops = 3e8;
  p.convolution_flops = 1e8;
  p.communication_s = 0.001;
  p.device_busy_s = 0.02;
  p.gemm_device_s = 0.01;
  p.data_wait_s = 0.003;
  p.peak_precision = "bfloat16";
  p.peak_flops_per_s = 5e10;
  p.op_call_s = 2e-6;
  const auto j = to_json(p);
  EXPECT_EQ(to_json(profile_from_json(j, "profile")), j);
}

TEST(ProfileSummary, AMalformedRowNamesItsPlace) {
  try {
    profile_from_json(nlohmann::json{{"ops", {{{"calls", 1}}}}}, "'run.json': profile");
    FAIL() << "an op row without a name was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'run.json': profile.ops[]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyno
