// Trial: one measured configuration, as the tuner records it in its journal and report: the
// point (knob -> value), the stage that asked for it, its budget level, the outcome from the
// fixed outcome list (a failed trial is a result), throughput with its 95% interval, peak memory,
// the loss trajectory the convergence guard looks at, and what it cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dyno/reports/outcome.h"

namespace dyno {

// The stages whose trials have a role of their own; every other stage is a search strategy's.
inline constexpr const char kGuardReferenceStage[] = "guard-reference";
inline constexpr const char kVerifyStage[] = "verify";
inline constexpr const char kProfileStage[] = "profile";

// What a trial is for: a search's measurement, the convergence guard's fp32 reference, or a run of
// the chosen point after the search (verification to the target, a profile).
enum class TrialRole { Search, GuardReference, Verify, Profile };

struct Trial {
  int64_t id = 0;
  std::string key;  // point_key(point) + "@" + budget level: the identity used for resume
  nlohmann::json point = nlohmann::json::object();
  std::string stage;
  int64_t budget_level = 1;
  Outcome outcome = Outcome::Ok;
  std::string reason;
  double samples_per_second = 0;  // median over windows
  double ci_low = 0;              // 95% interval of the median
  double ci_high = 0;
  double objective = 0;  // what the search maximises (throughput, or 1 / time to target)
  int64_t peak_memory_bytes = 0;
  std::optional<double> time_to_target_s;
  // A run that reached its target: the optimizer steps and the epochs to the evaluation that
  // reached it (0 = not known) and how far its metric passed the target there, toward better.
  int64_t steps_to_target = 0;
  double epochs_to_target = 0;
  double target_margin = 0;
  std::vector<double> losses;  // training loss per window
  std::vector<double> windows;  // throughput per window that the median and interval come from
  int64_t outpaced_by = 0;      // the trial it raced, when its run stopped below that point's bar (0 = ran to the end)
  double wall_time_s = 0;       // the trial's cost, process start to end
  std::string report_path;

  bool ok() const { return outcome == Outcome::Ok; }
  TrialRole role() const;  // from the stage
  bool candidate() const { return ok() && role() == TrialRole::Search; }  // a successful search measurement
  // Verification or profile: not part of the search's cost.
  bool after_search() const { return role() == TrialRole::Verify || role() == TrialRole::Profile; }
};

nlohmann::json to_json(const Trial& trial);
// `where` names the object in errors (a journal's file and line).
Trial trial_from_json(const nlohmann::json& json, const std::string& where = "trial");
std::string trial_key(const nlohmann::json& point, int64_t budget_level);
// Sets the trial's throughput from its windows: their median and its 95% interval (0 without).
void set_throughput_from_windows(Trial& trial);

}  // namespace dyno
