#include "tuner/tune_report.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "reports/run_report.h"
#include "tuner/tuner.h"

namespace dyno {

std::string describe_changes(const Tuner& tuner, const nlohmann::json& point) {
  std::string out;
  for (const auto& [knob, value] : point.items())
    if (!tuner.start_point().contains(knob) || tuner.start_point()[knob] != value)
      out += (out.empty() ? "" : " ") + knob + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return out.empty() ? "(start)" : out;
}

std::string describe_noise(const NoiseModel& noise) {
  char line[200];
  const double spread = 100.0 * (std::exp(noise.sigma()) - 1.0);
  if (noise.slow_chance() == 0)
    std::snprintf(line, sizeof line, "noise between seeds: %.1f%% spread, no slow spells (%.0f degrees of freedom)", spread, noise.degrees_of_freedom());
  else
    std::snprintf(line, sizeof line, "noise between processes: %.1f%% spread, slow spells in %.0f%% of processes at %.0f%% slower (%.0f degrees of freedom)",
                  spread, 100.0 * noise.slow_chance(), 100.0 * (1.0 - std::exp(-noise.slow_shift())), noise.degrees_of_freedom());
  return line;
}

nlohmann::json tune_report_json(const Tuner& tuner, const TuneSummary& summary) {
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : tuner.trials()) {
    auto j = to_json(t);
    j["changes"] = describe_changes(tuner, t.point);
    trials.push_back(j);
  }
  const NoiseModel noise = tuner.noise();
  nlohmann::json pareto = nlohmann::json::array();
  for (const Trial* t : tuner.pareto_front())
    pareto.push_back({{"id", t->id}, {"samples_per_second", t->samples_per_second}, {"peak_memory_bytes", t->peak_memory_bytes},
                      {"changes", describe_changes(tuner, t->point)}});
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
  for (const auto& t : tuner.trials()) ++outcomes[to_string(t.outcome)];
  return {{"schema_version", std::to_string(kReportSchemaMajor) + "." + std::to_string(kReportSchemaMinor)},
          {"kind", "tune"},
          {"workload", summary.workload},
          {"device", summary.device},
          {"strategy", tuner.options().strategy},
          {"objective", tuner.options().objective},
          {"seed", tuner.options().seed},
          {"space", tuner.space().to_json()},
          {"grid_size", tuner.space().grid_size()},
          {"base_config", summary.base_config},
          {"start_point", tuner.start_point()},
          {"trials", trials},
          {"outcomes", outcomes},
          {"best", best_json},
          {"pareto_front", pareto},
          {"ranking", ranking},
          {"noise", {{"sigma", noise.sigma()}, {"slow_chance", noise.slow_chance()}, {"slow_shift", noise.slow_shift()},
                     {"degrees_of_freedom", noise.degrees_of_freedom()}}},
          {"cost", {{"trials", tuner.executed_trials()}, {"trial_time_s", tuner.spent_s()}, {"wall_time_s", summary.wall_time_s}}},
          {"throughput_phase", summary.throughput_phase},
          {"verification", summary.verification},
          {"profiles", summary.profiles},
          {"environment", summary.environment}};
}

std::string trials_table(const Tuner& tuner) {
  std::ostringstream out;
  char line[512];
  // Throughput trials show the median's 95% interval; time-to-target trials their time to the target.
  const bool to_target = !tuner.options().throughput();
  std::snprintf(line, sizeof line, "%4s  %-15s %-14s %12s  %-21s %9s %7s  %s\n", "id", "stage", "outcome", "samples/s",
                to_target ? "to target s" : "95% interval", "peak MiB", "time s", "changes from start");
  out << line;
  const Trial* best = tuner.best();
  for (const auto& t : tuner.trials()) {
    char interval[64] = "";
    if (t.time_to_target_s && (to_target || t.role() == TrialRole::Verify)) std::snprintf(interval, sizeof interval, "%.1f", *t.time_to_target_s);
    else if (t.ok() && t.role() != TrialRole::Verify) std::snprintf(interval, sizeof interval, "[%.0f, %.0f]", t.ci_low, t.ci_high);
    std::snprintf(line, sizeof line, "%4lld%s %-15s %-14s %12.0f  %-21s %9.0f %7.1f  %s\n", static_cast<long long>(t.id),
                  best && best->id == t.id ? "*" : " ", t.stage.c_str(), to_string(t.outcome),
                  std::isfinite(t.samples_per_second) ? t.samples_per_second : 0.0, interval,
                  static_cast<double>(t.peak_memory_bytes) / (1 << 20), t.wall_time_s, describe_changes(tuner, t.point).c_str());
    out << line;
    if (!t.ok() && !t.reason.empty()) out << "        " << t.reason.substr(0, 160) << "\n";
  }
  return out.str();
}

}  // namespace dyno
