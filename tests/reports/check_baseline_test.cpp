#include "dyno/reports/check_baseline.h"

#include <gtest/gtest.h>

#include "user_error_matcher.h"

namespace dyno {
namespace {

using testing::error_of;

nlohmann::json baseline(const std::string& extra = "") {
  return nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "baseline", "config": {"workload": "fashion-mlp", "batch_size": 64},
                                   "figure": "window_p90", "runs": [100, 101.5, 99], "environment": {"cores": 2})" + extra + "}");
}

TEST(CheckBaseline, ReadsConfigFigureRunsAndEnvironment) {
  const CheckBaseline b = check_baseline_from_json(baseline(), "b.json");
  EXPECT_EQ(b.config["batch_size"], 64);
  EXPECT_EQ(b.figure, "window_p90");
  EXPECT_EQ(b.runs, (std::vector<double>{100, 101.5, 99}));
  EXPECT_EQ(b.environment["cores"], 2);
}

TEST(CheckBaseline, RefusesWhatItCannotCompareAgainst) {
  EXPECT_EQ(error_of([] { check_baseline_from_json(nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "check"})"), "b.json"); }),
            "[check] 'b.json' is not a dyno baseline (make one with dyno check --record FILE)");
  auto b = baseline();
  b["runs"] = {100, "fast"};
  EXPECT_EQ(error_of([&] { check_baseline_from_json(b, "b.json"); }),
            "[check] 'b.json': field 'runs' is [100,\"fast\"]; expected an array of 2 or more throughputs, each a finite number above 0");
  b["runs"] = nlohmann::json::array();
  EXPECT_NE(error_of([&] { check_baseline_from_json(b, "b.json"); }).find("2 or more"), std::string::npos);
  b["runs"] = {100};  // one process: no spread between processes to compare against
  EXPECT_NE(error_of([&] { check_baseline_from_json(b, "b.json"); }).find("2 or more"), std::string::npos);
  b = baseline();
  b["config"]["batch_size"] = "large";
  EXPECT_NE(error_of([&] { check_baseline_from_json(b, "b.json"); }).find("batch_size"), std::string::npos);
  b = baseline();
  b["environment"] = "x";
  EXPECT_EQ(error_of([&] { check_baseline_from_json(b, "b.json"); }), "[check] 'b.json': field 'environment' is \"x\"; expected an object");
  b = baseline();
  b["environment"]["threads"] = "2";
  EXPECT_EQ(error_of([&] { check_baseline_from_json(b, "b.json"); }), "[check] 'b.json' environment: field 'threads' is \"2\"; expected a whole number");
  b = baseline();
  b["environment"]["cpu_model"] = 7;
  EXPECT_EQ(error_of([&] { check_baseline_from_json(b, "b.json"); }), "[check] 'b.json' environment: field 'cpu_model' is 7; expected text");
}

// A baseline from before the field held each run's median, which a check's runs (window_p90) are not.
TEST(CheckBaseline, WithoutAFigureItsRunsAreMedians) {
  auto b = baseline();
  b.erase("figure");
  EXPECT_EQ(check_baseline_from_json(b, "b.json").figure, "median");
}

}  // namespace
}  // namespace dyno
