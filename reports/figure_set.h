// FigureSet: the per-repetition figures of one result file, by metric, whatever produced it:
//   - a dyno run report: "samples_per_second" from its measurement windows (higher is better), of
//     a long run kMostRunWindows drawn at random (a fixed seed);
//   - a dyno check baseline/result: "samples_per_second" from its runs (one figure per process);
//   - Google Benchmark JSON (with --benchmark_repetitions): each benchmark's real time per
//     repetition (lower is better), and its items_per_second where reported (higher is better).
// The environment travels along so that a comparison can warn when the machines differ.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

inline constexpr size_t kMostRunWindows = 2000;

struct MetricSamples {
  bool higher_is_better = true;
  std::string unit;
  std::vector<double> values;
};

struct FigureSet {
  std::string kind;  // run | baseline | check | google-benchmark
  std::map<std::string, MetricSamples> metrics;
  std::map<std::string, std::string> errors;  // Google Benchmark: a benchmark that errored -> its error_message
  nlohmann::json environment = nlohmann::json::object();  // device, libtorch_version, cores, cpu_model, ...
  nlohmann::json config = nlohmann::json::object();  // the settings measured (run reports, baselines, check results); {} when not said
  std::string figure;  // what each figure is: a run's (window_p90, median: baseline, check; "" when not said), or "window" (a run report)
};

// Throws UserError naming the file and what is wrong with it.
FigureSet load_figure_set(const std::string& path);
FigureSet figure_set_from_json(const nlohmann::json& json, const std::string& what);
// Nanoseconds in one of a Google Benchmark time_unit (ns, us, ms, s); another is a UserError in
// `area`, naming `what` (the benchmark) and the unit.
double google_benchmark_ns_per(const std::string& unit, const std::string& area, const std::string& what);
// Human lines for every machine-fingerprint field that differs ("cores: 2 vs 16").
std::vector<std::string> environment_differences(const nlohmann::json& a, const nlohmann::json& b);
// Human lines for every setting of two configs that differs ("amp: \"off\" vs \"bf16\""), where
// files go (save_state, resume_state) left out; a UserError in `area` when the workloads differ:
// their figures are not one measurement's.
std::vector<std::string> config_differences(const nlohmann::json& a, const nlohmann::json& b, const std::string& area);

}  // namespace dyno
