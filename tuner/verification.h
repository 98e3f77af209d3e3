// Verification: the chosen point and the default configuration (the empty point), each trained to
// the target with its own executor, one pair per seed (docs/tuner.md, "Verification"); the speedup
// is the total default time over the total tuned time, null when any run missed the target.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace dyno {

class Tuner;
class TrialExecutor;

struct VerificationPlan {
  int seeds = 1;
  int64_t base_seed = 0;
  // Where a pair's seed goes: a workload's `seed` knob in the point, or (a program, whose seed is
  // DYNO_SEED) the budget level, seed s at level 1 + s. The first pair keeps the base seed and the
  // plain labels "best" and "default" (journals of earlier runs resume); pair s is "best-seed<s>".
  bool seed_as_level = false;
};

// {best, default, seeds: [{seed, best, default, speedup}], speedup}; each side {outcome, reason,
// time_to_target_s, samples_per_second, report}.
nlohmann::json verify_against_default(Tuner& tuner, TrialExecutor& tuned, TrialExecutor& fallback, const nlohmann::json& best_point,
                                      const VerificationPlan& plan);

}  // namespace dyno
