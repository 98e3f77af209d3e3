// The tuner's report.json (docs/report-schema.md): every trial, the best, the Pareto front, the
// ranking, the noise model, the cost, the verification and the profiles' verdicts.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

class Tuner;

struct TuneSummary {
  std::string workload;
  std::string device;
  std::string throughput_unit = "samples";  // what a trial's throughput counts per second
  nlohmann::json base_config = nullptr;  // the settings under every point (a program: its command too)
  nlohmann::json best_config = nullptr;  // what best-config.json holds
  // The best's changes from the run's untuned configuration when the tuner started elsewhere (time
  // to target's phase 2 starts from phase 1's winner); empty = describe_changes of the best.
  std::string best_changes;
  double wall_time_s = 0;
  nlohmann::json verification = nullptr;  // {best, default, speedup} or null
  nlohmann::json environment = nullptr;   // from the best trial's run report
  nlohmann::json throughput_phase = nullptr;  // time-to-target runs: phase 1's report path, best and cost
  // {best, default}: each configuration's profiled run (trial, verdict, report, trace, "at"), or null
  nlohmann::json profiles = nullptr;
};

nlohmann::json tune_report_json(const Tuner& tuner, const TuneSummary& summary);
// "knob=value knob=value" for the knobs a point changes from the tuner's start point; "(start)"
// for it, "(default)" for the empty point (the untuned configuration a verification runs).
std::string describe_changes(const Tuner& tuner, const nlohmann::json& point);

}  // namespace dyno
