// TrialExecutor: measures one point of the search space at a budget level and returns the Trial.
// The tuner's real executor runs `dyno train` in a child process (ProcessTrialExecutor); tests
// give a synthetic one with a known optimum. Executors never throw for a failed trial: the
// failure is the Trial's outcome.
#pragma once

#include <string>

#include "tuner/trial.h"

namespace dyno {

class TrialExecutor {
 public:
  virtual ~TrialExecutor() = default;
  virtual Trial execute(const nlohmann::json& point, int64_t budget_level, const std::string& name) = 0;
};

}  // namespace dyno
