#include "dyno/reports/technique_claims.h"

#include <gtest/gtest.h>

#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

TEST(TechniqueClaims, MatchesBenchmarkPairsAndSkips) {
  auto j = nlohmann::json::parse(R"({"benchmarks": [
    {"name": "zero_grad/zero_fill", "run_name": "zero_grad/zero_fill", "run_type": "iteration", "real_time": 900, "time_unit": "us"},
    {"name": "zero_grad/zero_fill", "run_name": "zero_grad/zero_fill", "run_type": "iteration", "real_time": 200, "time_unit": "us"},
    {"name": "zero_grad/zero_fill", "run_name": "zero_grad/zero_fill", "run_type": "iteration", "real_time": 180, "time_unit": "us"},
    {"name": "zero_grad/zero_fill", "run_name": "zero_grad/zero_fill", "run_type": "aggregate", "real_time": 426, "time_unit": "us"},
    {"name": "zero_grad/set_to_none", "run_name": "zero_grad/set_to_none", "run_type": "iteration", "real_time": 100000, "time_unit": "ns"},
    {"name": "zero_grad/set_to_none", "run_name": "zero_grad/set_to_none", "run_type": "iteration", "real_time": 0.1, "time_unit": "ms"},
    {"name": "cudnn_conv/benchmark_off", "run_name": "cudnn_conv/benchmark_off", "run_type": "iteration", "error_occurred": true,
     "error_message": "skipped: needs a CUDA device"},
    {"name": "cudnn_conv/benchmark_on", "run_name": "cudnn_conv/benchmark_on", "run_type": "iteration", "error_occurred": true,
     "error_message": "skipped: needs a CUDA device"}]})");
  auto rows = technique_rows(j);
  ASSERT_EQ(rows.size(), technique_claims().size());
  bool saw_zero_grad = false, saw_cudnn = false;
  for (const auto& r : rows) {
    if (r.claim.technique_benchmark == "zero_grad/set_to_none") {
      saw_zero_grad = true;
      EXPECT_EQ(r.status, "measured");
      EXPECT_DOUBLE_EQ(r.speedup, 2.0);  // the median repetition (200 us; one slow one does not move it) over 100 us, given in ns and ms
      EXPECT_DOUBLE_EQ(r.baseline_time, 200.0);
      EXPECT_EQ(r.unit, "us");
    }
    if (r.claim.number == 6) {
      saw_cudnn = true;
      EXPECT_EQ(r.status, "skipped: needs a CUDA device");
    }
  }
  EXPECT_TRUE(saw_zero_grad && saw_cudnn);
  const std::string table = technique_table_text(rows);
  EXPECT_NE(table.find("2.00x"), std::string::npos) << table;
  EXPECT_NE(table.find("\"modest\""), std::string::npos) << table;
  EXPECT_THROW(technique_rows(nlohmann::json::parse(R"({"context": {}})")), UserError);
}

// A time no benchmark measures (0, negative) is refused, naming the entry: its ratio would be a speed-up.
TEST(TechniqueClaims, ATimeNotAbove0IsRefused) {
  try {
    technique_rows(nlohmann::json::parse(R"({"benchmarks": [{"name": "cudnn_conv/benchmark_off", "real_time": -5, "time_unit": "ms"}]})"));
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("benchmarks[0]: field 'real_time' is -5; expected a finite number above 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dyno
