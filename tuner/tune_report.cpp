#include "dyno/tuner/tune_report.h"

#include <cstdint>
#include <map>

#include "dyno/reports/knob.h"
#include "dyno/reports/run_report.h"
#include "dyno/tuner/tuner.h"

namespace dyno {

std::string describe_changes(const Tuner& tuner, const nlohmann::json& point) {
  std::string out;
  for (const auto& [knob, value] : point.items())
    if (!tuner.start_point().contains(knob) || tuner.start_point()[knob] != value)
      out += (out.empty() ? "" : " ") + knob + "=" + knob_value_text(value);
  return !out.empty() ? out : point.empty() ? "(default)" : "(start)";  // {}: the untuned configuration (verification, profile)
}

nlohmann::json tune_report_json(const Tuner& tuner, const TuneSummary& summary) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : tuner.trials()) {  // this run's (a resume that went another way leaves some journaled ones out)
    if (!tuner.visible(t)) continue;
    auto j = to_json(t);
    j["changes"] = describe_changes(tuner, t.point);
    trials.push_back(j);
  }
  const NoiseModel noise = tuner.noise();
  nlohmann::json pareto = nlohmann::json::array();
  for (const auto& [point, bytes] : tuner.pareto_front())  // each configuration's latest trial, with its figures over its processes
    pareto.push_back({{"id", tuner.latest(point)->id}, {"samples_per_second", tuner.latest(point)->samples_per_second}, {"peak_memory_bytes", bytes},
                      {"estimate", tuner.estimated_objective(point)}, {"processes", tuner.evidence(point).processes()}, {"changes", describe_changes(tuner, point)}});
  nlohmann::json ranking = nlohmann::json::array();
  for (const auto& point : tuner.leading_points(SIZE_MAX))
    ranking.push_back({{"point", point}, {"changes", describe_changes(tuner, point)}, {"estimate", tuner.estimated_objective(point)},
                       {"processes", tuner.evidence(point).processes()}});
  const Trial* best = tuner.best();
  nlohmann::json best_json = nullptr;
  if (best) {
    best_json = to_json(*best);
    best_json["changes"] = summary.best_changes.empty() ? describe_changes(tuner, best->point) : summary.best_changes;
    best_json["config"] = summary.best_config;
    best_json["estimate"] = tuner.estimated_objective(best->point);
  }
  std::map<std::string, int64_t> outcomes;
  for (const auto& t : tuner.trials()) if (tuner.visible(t)) ++outcomes[to_string(t.outcome)];
  return {{"schema_version", std::to_string(kReportSchemaMajor) + "." + std::to_string(kReportSchemaMinor)}, {"kind", "tune"},
          {"workload", summary.workload}, {"device", summary.device}, {"throughput_unit", summary.throughput_unit},
          {"strategy", tuner.options().strategy}, {"objective", tuner.options().objective}, {"seed", tuner.options().seed},
          {"space", tuner.space().to_json()}, {"grid_size", tuner.space().grid_size()}, {"base_config", summary.base_config},
          {"start_point", tuner.start_point()}, {"trials", trials}, {"outcomes", outcomes}, {"best", best_json}, {"pareto_front", pareto},
          {"ranking", ranking},
          {"noise", {{"sigma", noise.sigma()}, {"slow_chance", noise.slow_chance()}, {"slow_shift", noise.slow_shift()},
                     {"degrees_of_freedom", noise.degrees_of_freedom()}}},
          {"cost", {{"trials", tuner.executed_trials()}, {"trial_time_s", tuner.spent_s()}, {"wall_time_s", summary.wall_time_s}}},
          {"throughput_phase", summary.throughput_phase}, {"verification", summary.verification}, {"profiles", summary.profiles},
          {"environment", summary.environment}};
}

}  // namespace dyno
