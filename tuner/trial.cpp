#include "dyno/tuner/trial.h"

#include <cmath>

#include "dyno/reports/json_fields.h"
#include "dyno/reports/statistics.h"
#include "dyno/tuner/search_space.h"

namespace dyno {

TrialRole Trial::role() const {
  if (stage == kGuardReferenceStage) return TrialRole::GuardReference;
  if (stage == kVerifyStage) return TrialRole::Verify;
  if (stage == kProfileStage) return TrialRole::Profile;
  return TrialRole::Search;
}

std::string trial_key(const nlohmann::json& point, int64_t budget_level) { return point_key(point) + "@" + std::to_string(budget_level); }

void set_throughput_from_windows(Trial& trial) {
  if (trial.windows.empty()) {
    trial.samples_per_second = trial.ci_low = trial.ci_high = 0;
    return;
  }
  trial.samples_per_second = median(trial.windows);
  const Interval ci = median_confidence_interval(trial.windows);
  trial.ci_low = ci.low;
  trial.ci_high = ci.high;
}

nlohmann::json to_json(const Trial& t) {
  auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  std::vector<nlohmann::json> losses;
  for (double l : t.losses) losses.push_back(number(l));
  return {{"id", t.id}, {"key", t.key}, {"point", t.point}, {"stage", t.stage}, {"budget_level", t.budget_level},
          {"outcome", t.outcome}, {"reason", t.reason},
          {"samples_per_second", number(t.samples_per_second)}, {"ci_low", number(t.ci_low)}, {"ci_high", number(t.ci_high)},
          {"objective", number(t.objective)}, {"peak_memory_bytes", t.peak_memory_bytes},
          {"time_to_target_s", t.time_to_target_s ? nlohmann::json(*t.time_to_target_s) : nlohmann::json(nullptr)},
          {"steps_to_target", t.steps_to_target}, {"epochs_to_target", number(t.epochs_to_target)}, {"target_margin", number(t.target_margin)},
          {"losses", losses}, {"windows", t.windows}, {"outpaced_by", t.outpaced_by}, {"wall_time_s", t.wall_time_s},
          {"report_path", t.report_path}};
}

Trial trial_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonFields j(json, "journal", where);
  auto number = [&](const char* key) { return j.number_at_least(key, 0, std::nan("")); };  // a figure, null when there was none
  Trial t;
  t.id = j.required_integer("id");
  t.key = j.required_text("key");
  t.point = j.required("point");
  if (!t.point.is_object()) j.fail("point", "an object of knob values");
  t.stage = j.text("stage");
  t.budget_level = j.integer("budget_level", 1);
  if (const auto outcome = outcome_from_string(j.required_text("outcome"))) t.outcome = *outcome;
  else j.fail("outcome", "one of " + outcome_names());
  t.reason = j.text("reason");
  t.samples_per_second = number("samples_per_second");
  t.ci_low = j.has("ci_low") ? j.number("ci_low") : std::nan("");
  t.ci_high = number("ci_high");
  t.objective = number("objective");
  t.peak_memory_bytes = j.integer("peak_memory_bytes");
  if (j.has("time_to_target_s")) t.time_to_target_s = j.number("time_to_target_s");
  t.steps_to_target = j.integer("steps_to_target");
  t.epochs_to_target = j.number("epochs_to_target");
  t.target_margin = j.number("target_margin");
  t.losses = j.numbers("losses");
  for (double w : j.numbers("windows"))
    if (!std::isnan(w)) t.windows.push_back(w);
  t.outpaced_by = j.integer("outpaced_by");
  t.wall_time_s = j.number_at_least("wall_time_s", 0, 0);
  t.report_path = j.text("report_path");
  return t;
}

}  // namespace dyno
