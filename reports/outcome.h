// Outcome: how a run or a tuner's trial ended, from one fixed list (a failed run is a result, not
// an error). Files carry it as its snake_case name; reading an unknown name is a UserError that
// lists the valid ones.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace dyno {

enum class Outcome {
  Ok,
  Diverged,       // the loss became NaN or infinite, or the convergence guard's loss rule failed
  Oom,            // out of memory, in any phase, or a peak above the tuner's --memory-limit
  Crashed,        // killed by a signal other than SIGABRT, or exited without a result
  Aborted,        // SIGABRT (a failed check inside LibTorch)
  Timeout,        // no result within the trial's time limit; killed
  InvalidConfig,  // the configuration cannot run (a knob value the workload or program refuses)
  Rejected,       // ran, but its result may not be chosen (the guard, a memory limit, a missed target)
  InvalidReport,  // an external program's report could not be read
  Interrupted,    // the tuner was interrupted while the trial ran (resume re-runs it)
};

const char* to_string(Outcome outcome);
// The outcome named `name`, or nullopt; readers then fail naming the field and outcome_names().
std::optional<Outcome> outcome_from_string(const std::string& name);
std::string outcome_names();  // "ok, diverged, ..."

inline std::ostream& operator<<(std::ostream& out, Outcome outcome) { return out << to_string(outcome); }
inline void to_json(nlohmann::json& json, Outcome outcome) { json = to_string(outcome); }

}  // namespace dyno
