#include "dyno/reports/figure_set.h"

#include <cmath>

#include <gtest/gtest.h>

#include "dyno/reports/run_report.h"
#include "dyno/reports/user_error.h"

namespace dyno {
namespace {

TEST(FigureSet, ReadsGoogleBenchmarkRepetitions) {
  auto j = nlohmann::json::parse(R"({"context": {"num_cpus": 2, "host_name": "h"}, "benchmarks": [
    {"name": "BM_a/repeats:3", "run_name": "BM_a", "run_type": "iteration", "real_time": 10.0, "time_unit": "ns", "items_per_second": 5},
    {"name": "BM_a/repeats:3", "run_name": "BM_a", "run_type": "iteration", "real_time": 11.0, "time_unit": "ns", "items_per_second": 6},
    {"name": "BM_a/repeats:3_mean", "run_name": "BM_a", "run_type": "aggregate", "real_time": 10.5},
    {"name": "BM_b", "run_name": "BM_b", "run_type": "iteration", "error_occurred": true, "error_message": "skipped"}]})");
  FigureSet s = figure_set_from_json(j, "x");
  EXPECT_EQ(s.kind, "google-benchmark");
  ASSERT_TRUE(s.metrics.count("BM_a real_time"));
  EXPECT_EQ(s.metrics["BM_a real_time"].values, (std::vector<double>{10, 11}));
  EXPECT_FALSE(s.metrics["BM_a real_time"].higher_is_better);
  EXPECT_TRUE(s.metrics["BM_a items_per_second"].higher_is_better);
  EXPECT_FALSE(s.metrics.count("BM_b real_time"));  // skipped benchmarks carry no figures
}

TEST(FigureSet, ReadsBaselinesAndRejectsMalformedOnes) {
  auto ok = nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "baseline", "runs": [100, 101, 99], "environment": {"cores": 2}})");
  EXPECT_EQ(figure_set_from_json(ok, "b").metrics["samples_per_second"].values.size(), 3u);
  auto no_runs = nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "baseline"})");
  EXPECT_THROW(figure_set_from_json(no_runs, "b"), UserError);
  auto bad_run = nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "baseline", "runs": [1, "x"]})");
  EXPECT_THROW(figure_set_from_json(bad_run, "b"), UserError);
  auto future = nlohmann::json::parse(R"({"schema_version": "3.0", "kind": "baseline", "runs": [1, 2]})");
  EXPECT_THROW(figure_set_from_json(future, "b"), UserError);
  auto tune = nlohmann::json::parse(R"({"schema_version": "1.0", "kind": "tune"})");
  EXPECT_THROW(figure_set_from_json(tune, "t"), UserError);
}

// Of a long run 2000 windows are drawn (comparing two runs takes every pair): each figure is still
// one window, in the run's proportions, whatever period the run has.
TEST(FigureSet, ALongRunKeepsARandomDrawOfItsWindows) {
  RunReport r;
  for (int i = 0; i < 20000; ++i) r.throughput_windows.push_back(i % 10 == 0 ? 500 : 1000);
  const auto windows = figure_set_from_json(to_json(r), "r").metrics["samples_per_second"];
  ASSERT_EQ(windows.values.size(), kMostRunWindows);
  int slow = 0;
  for (double v : windows.values) {
    EXPECT_TRUE(v == 500 || v == 1000) << v;  // windows, not means of them
    slow += v == 500;
  }
  EXPECT_NEAR(slow / 2000.0, 0.1, 0.025);  // a stride of 10 would keep only the slow ones
  r.throughput_windows.resize(40);
  EXPECT_EQ(figure_set_from_json(to_json(r), "r").metrics["samples_per_second"].values, r.throughput_windows);  // a short run's as they are
}

// A figure no measurement gives (a null window, a negative time) is the file's error, naming it.
TEST(FigureSet, AFigureNotAbove0IsRefusedNamingWhereItIs) {
  RunReport r;
  r.throughput_windows = {100, std::nan(""), 99};
  const auto error = [](const nlohmann::json& j) {
    try {
      figure_set_from_json(j, "'r.json'");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error(to_json(r)), "[compare] 'r.json': throughput_windows[1] is null; expected a throughput above 0");
  EXPECT_EQ(error(nlohmann::json::parse(R"({"benchmarks": [{"name": "BM_a", "real_time": -1, "time_unit": "ns"}]})")),
            "[compare] 'r.json': benchmark 'BM_a': field 'real_time' is -1; expected a finite number above 0");
  // A benchmark that processed no items has no rate, only its time.
  const auto none = figure_set_from_json(nlohmann::json::parse(R"({"benchmarks": [{"name": "BM_a", "real_time": 5, "items_per_second": 0}]})"), "'r.json'");
  EXPECT_TRUE(none.metrics.count("BM_a real_time"));
  EXPECT_FALSE(none.metrics.count("BM_a items_per_second"));
}

TEST(FigureSet, EnvironmentDifferencesAreNamed) {
  auto diff = environment_differences({{"cores", 2}, {"device", "cpu"}, {"libtorch_version", "2.11.0"}},
                                      {{"cores", 16}, {"device", "cpu"}, {"libtorch_version", "2.4.0"}});
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0], "cores: 2 vs 16");
  EXPECT_EQ(diff[1], "libtorch_version: \"2.11.0\" vs \"2.4.0\"");
}

}  // namespace
}  // namespace dyno
