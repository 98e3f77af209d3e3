#include "dyno/reports/html_report.h"

#include <gtest/gtest.h>

#include "dyno/reports/json_fields.h"

#include <tuple>
#include <vector>

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

// A tuning run with its verification and profiled runs (ids 4 to 7), as `dyno tune` writes them.
nlohmann::json tune_report_with_final_runs() {
  auto tune = tune_report();
  for (const auto& [id, stage, key] : std::vector<std::tuple<int, const char*, const char*>>{
           {4, "verify", "verify:best:{}"}, {5, "verify", "verify:default:{}"}, {6, "profile", "profile:best:{}"}, {7, "profile", "profile:default:{}"}})
    tune["trials"].push_back({{"id", id}, {"stage", stage}, {"key", key}, {"outcome", "ok"}, {"samples_per_second", 999999}});
  tune["profiles"] = {
      {"best", {{"trial", 6}, {"at", "batch_size 512 with bf16"}, {"trace", "runs/x/trials/profile-best/trace.json"},
                {"verdict", {{"kind", "compute"}, {"headline", "compute-bound, 38% of the measured bfloat16 GEMM peak"}, {"sentence", "s1"}}}}},
      {"default", {{"trial", 7}, {"at", "batch_size 64"}, {"verdict", {{"kind", "input"}, {"headline", "input-bound"}, {"sentence", "s2 <data>"}}}}}};
  return tune;
}

TEST(HtmlReport, StatesTheVerdictsTheChosenOpTableAndVerificationAgainstWallClockTime) {
  std::map<int64_t, nlohmann::json> runs;
  const auto curve = nlohmann::json::parse(R"({"loss": [{"step": 10, "time_s": 1.5, "value": 2.0}, {"step": 20, "time_s": 3.0, "value": 1.0}],
                                               "metric": [{"step": 20, "time_s": 3.2, "value": 0.9}]})");
  runs[4] = {{"curves", curve}};
  runs[5] = {{"curves", curve}};
  runs[6] = {{"profile", {{"steps", 5}, {"wall_s", 0.05},
                          {"ops", {{{"name", "aten::addmm"}, {"calls", 15}, {"self_s", 0.03}, {"total_s", 0.031}, {"flops", 5e9},
                                    {"input_shapes", "[[512], [512, 784], [784, 256]]"}},
                                   {{"name", "dyno::data_wait"}, {"calls", 5}, {"self_s", 0.019}, {"total_s", 0.02}, {"flops", 0}}}}}}};
  const std::string html = render_html_report(tune_report_with_final_runs(), runs, nullptr);
  EXPECT_NE(html.find("What limits it: bottleneck verdicts"), std::string::npos);
  EXPECT_NE(html.find("compute-bound, 38% of the measured bfloat16 GEMM peak"), std::string::npos);
  EXPECT_NE(html.find("batch_size 512 with bf16"), std::string::npos);
  EXPECT_NE(html.find("s2 &lt;data&gt;"), std::string::npos);
  EXPECT_NE(html.find("runs/x/trials/profile-best/trace.json"), std::string::npos);
  // The op table, per step: 30 ms of addmm over 5 steps is 6 ms a step, 60% of the profiled time.
  EXPECT_NE(html.find("Op table of the chosen configuration"), std::string::npos);
  EXPECT_NE(html.find("<td>aten::addmm</td><td>6.000</td><td>60.0</td>"), std::string::npos);
  EXPECT_NE(html.find("[[512], [512, 784], [784, 256]]"), std::string::npos);
  EXPECT_NE(html.find("add up to 98% of it"), std::string::npos);
  EXPECT_NE(html.find("Verification runs against wall-clock time"), std::string::npos);
  EXPECT_NE(html.find("wall-clock time (s)"), std::string::npos);
  // Runs after the search are listed with every trial, but are not plotted as the search's.
  EXPECT_NE(html.find("<td>999999</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>verify</td><td>ok</td><td>999999</td><td>-</td>"), std::string::npos);  // no interval for a run to the target
  EXPECT_EQ(html.find("999999 samples/s"), std::string::npos);
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

// The best's figure is the point's estimate over its processes when the report has one (schema
// 1.3); the trial's own figure and interval follow it. An older report states the trial's.
TEST(HtmlReport, StatesTheBestPointsEstimateBesideItsTrialsFigure) {
  auto tune = tune_report();
  EXPECT_NE(render_html_report(tune, {}, nullptr).find("<b>200 samples/s</b> [190, 210], batch_size=128"), std::string::npos);
  tune["best"]["estimate"] = 204.4;
  EXPECT_NE(render_html_report(tune, {}, nullptr).find("<b>204 samples/s</b> estimated over its processes (this trial 200 [190, 210]), batch_size=128"),
            std::string::npos);
}

// The front is of configurations, each at its estimate over its processes (schema 1.5), in the
// objective's terms: seconds to the target for a time-to-target run.
TEST(HtmlReport, TheParetoFrontIsOfConfigurationsInTheObjectivesTerms) {
  auto tune = tune_report();
  tune["pareto_front"][1]["estimate"] = 204.4;
  tune["pareto_front"][1]["processes"] = 3;
  tune["pareto_front"][1]["changes"] = "batch_size=128";
  std::string html = render_html_report(tune, {}, nullptr);
  EXPECT_NE(html.find("Throughput / peak memory Pareto front"), std::string::npos);
  EXPECT_NE(html.find("<title>batch_size=128 (3 processes; latest trial 2)</title>"), std::string::npos);
  tune["objective"] = "time-to-target";
  tune["pareto_front"][1]["estimate"] = 0.1;  // 10 s
  tune["trials"][1]["time_to_target_s"] = 10;
  tune["trials"][0]["time_to_target_s"] = 20;
  html = render_html_report(tune, {}, nullptr);
  const auto front = html.find("Time to target / peak memory Pareto front");
  ASSERT_NE(front, std::string::npos);
  EXPECT_NE(html.find("seconds to the target (lower is better)", front), std::string::npos);
  // The configuration's dot is at its 10 s (1 / estimate), the height of trial 2's 10 s.
  auto cy_before = [&](const std::string& marker) {
    const auto at = html.find(marker, front);
    const auto cy = html.rfind("cy='", at);
    return at == std::string::npos || cy == std::string::npos ? -1.0 : std::stod(html.substr(cy + 4));
  };
  const double trial = cy_before("r='3.5' fill='#9aa9c4'><title>trial 2:"), configuration = cy_before("r='5' fill='#ff7f0e'><title>batch_size=128");
  ASSERT_GT(trial, 0);
  EXPECT_NEAR(configuration, trial, 0.1);
}

// A time-to-target run is stated in seconds to the target (its interval is of 1 / seconds, not a
// throughput's), its throughput in the workload's unit, each verification seed in a row, and each
// verification run labelled with its side.
TEST(HtmlReport, ATimeToTargetRunIsStatedInSecondsAndTheWorkloadsUnit) {
  auto tune = tune_report_with_final_runs();
  tune["objective"] = "time-to-target";
  tune["throughput_unit"] = "tokens";
  tune["best"]["time_to_target_s"] = 12.5;
  tune["trials"][1]["time_to_target_s"] = 12.5;
  tune["trials"][1]["ci_low"] = tune["trials"][1]["ci_high"] = 0.08;
  tune["trials"][0]["time_to_target_s"] = 9.0;  // the slower configuration, sooner to the target
  tune["trials"].push_back({{"id", 8}, {"stage", "verify"}, {"key", "verify:best-seed1:{}"}, {"outcome", "ok"}, {"samples_per_second", 1}});
  tune["verification"]["seeds"] = nlohmann::json::parse(R"([{"seed": 0, "best": {"time_to_target_s": 2.0}, "default": {"time_to_target_s": 5.0}, "speedup": 2.5},
                                                            {"seed": 1, "best": {"time_to_target_s": 3.0}, "default": {"time_to_target_s": 6.0}, "speedup": 2.0}])");
  tune["verification"]["speedup"] = 2.2;
  tune["throughput_phase"] = {{"report", "runs/t/throughput/report.json"}, {"best_changes", "amp=bf16"}};
  std::map<int64_t, nlohmann::json> runs;
  const auto curve = nlohmann::json::parse(R"({"loss": [{"step": 10, "time_s": 1.5, "value": 2.0}], "metric": []})");
  runs[1] = runs[2] = runs[4] = runs[5] = runs[8] = {{"curves", curve}};
  const std::string html = render_html_report(tune, runs, nullptr);
  // The loss curves shown are the trials soonest to the target, the soonest first.
  const auto curves = html.find("<h2>Loss curves of the trials soonest to the target</h2>");
  ASSERT_NE(curves, std::string::npos) << html;
  EXPECT_LT(html.find("trial 1: (start)", curves), html.find("trial 2: batch_size=128", curves));
  EXPECT_NE(html.find("<b>12.5 s to the target</b> (200 tokens/s), batch_size=128"), std::string::npos) << html;
  EXPECT_NE(html.find("Time to the target per trial"), std::string::npos);
  EXPECT_NE(html.find("seconds to the target (lower is better)"), std::string::npos);
  EXPECT_NE(html.find("<th>tokens/s</th><th>s to target</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>200</td><td>12.5</td>"), std::string::npos);
  EXPECT_EQ(html.find("[0, 0]"), std::string::npos);  // no interval of 1 / seconds
  EXPECT_EQ(html.find("samples/s"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>1</td><td>3.0 s</td><td>6.0 s</td><td>2.00x</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("Verification over 2 seeds (total default time over total tuned time), <b>2.20x sooner</b>"), std::string::npos);
  EXPECT_NE(html.find("tuned, trial 8"), std::string::npos);
  EXPECT_NE(html.find("default, trial 5"), std::string::npos);
  EXPECT_NE(html.find("Phase 1 (throughput) chose amp=bf16; its report is <code>throughput/report.json</code> in this folder"), std::string::npos);
}

// Text is escaped for an element and for an attribute in either quote (the report's are in ').
TEST(HtmlReport, EscapesTextForElementsAndAttributes) { EXPECT_EQ(html_escape("a&<b>\"c'"), "a&amp;&lt;b&gt;&quot;c&#39;"); }

// What a report file names is text, never markup: a phase's name and a benchmark's time unit too. (The
// run report here has no curves, as a program's: its charts are left out.)
TEST(HtmlReport, NamesFromFilesAreEscaped) {
  std::map<int64_t, nlohmann::json> runs;
  runs[2] = nlohmann::json::parse(R"({"phases": {"<img src=x>": {"per_step_ms": 1.0}}})");
  const auto techniques = nlohmann::json::parse(R"({"benchmarks": [
      {"name": "zero_grad/zero_fill", "real_time": 10, "time_unit": "us"},
      {"name": "zero_grad/set_to_none", "real_time": 5, "time_unit": "us"}]})");
  auto tune = tune_report();
  tune["trials"][2]["changes"] = "amp=<script>";
  const std::string html = render_html_report(tune, runs, techniques);
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_EQ(html.find("<script"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;img src=x&gt;"), std::string::npos);
}

// Text cut to fit a cell is cut between characters: the page stays UTF-8.
TEST(HtmlReport, TextCutToFitStaysUtf8) {
  auto tune = tune_report();
  tune["trials"][2]["reason"] = std::string(119, 'a') + "\u00e9 and more";
  const std::string html = render_html_report(tune, {}, nullptr);
  EXPECT_TRUE(valid_utf8(html));
  EXPECT_NE(html.find(std::string(119, 'a') + "</td>"), std::string::npos);
}

}  // namespace
}  // namespace dyno
