#include "reports/html_report.h"

#include <gtest/gtest.h>

namespace dyno {
namespace {

nlohmann::json tune_report() {
  return nlohmann::json::parse(R"json({"schema_version": "1.0", "kind": "tune", "workload": "fashion-mlp", "device": "cpu",
    "strategy": "staged", "objective": "throughput", "grid_size": 4, "cost": {"trials": 3, "trial_time_s": 5, "wall_time_s": 6},
    "best": {"id": 2, "samples_per_second": 200, "ci_low": 190, "ci_high": 210, "changes": "batch_size=128"},
    "pareto_front": [{"id": 1, "samples_per_second": 100, "peak_memory_bytes": 100000000},
                     {"id": 2, "samples_per_second": 200, "peak_memory_bytes": 200000000}],
    "trials": [
      {"id": 1, "stage": "start", "outcome": "ok", "samples_per_second": 100, "ci_low": 95, "ci_high": 105, "peak_memory_bytes": 100000000, "changes": "(start)"},
      {"id": 2, "stage": "batch-grow", "outcome": "ok", "samples_per_second": 200, "ci_low": 190, "ci_high": 210, "peak_memory_bytes": 200000000, "changes": "batch_size=128"},
      {"id": 3, "stage": "knobs", "outcome": "crashed", "reason": "killed by signal 11 <segv>", "samples_per_second": 0, "changes": "amp=bf16"}],
    "verification": {"best": {"time_to_target_s": 2.0}, "default": {"time_to_target_s": 5.0}, "speedup": 2.5}})json");
}

TEST(HtmlReport, SelfContainedWithEveryChart) {
  std::map<int64_t, nlohmann::json> runs;
  runs[2] = nlohmann::json::parse(R"({"curves": {"loss": [{"step": 10, "value": 2.0}, {"step": 20, "value": 1.0}], "metric": []},
    "phases": {"forward": {"per_step_ms": 1.0}, "backward": {"per_step_ms": 2.0}, "eval": {"per_step_ms": 0}}})");
  const std::string html = render_html_report(tune_report(), runs, nullptr);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // no scripts
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg' width") != std::string::npos, true);
  for (const char* section : {"Throughput per trial", "Pareto front", "Loss curves", "Phase breakdown", "Techniques: claimed vs measured"})
    EXPECT_NE(html.find(section), std::string::npos) << section;
  EXPECT_NE(html.find("2.50x sooner"), std::string::npos);
  EXPECT_NE(html.find("killed by signal 11 &lt;segv&gt;"), std::string::npos);  // reasons are escaped
  EXPECT_NE(html.find("backward 2 ms"), std::string::npos);
}

}  // namespace
}  // namespace dyno
