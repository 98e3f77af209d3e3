#include "dyno/tuner/verification.h"

#include <string>

#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

nlohmann::json describe(const Trial& t) {
  return {{"outcome", t.outcome}, {"reason", t.reason}, {"time_to_target_s", t.time_to_target_s ? nlohmann::json(*t.time_to_target_s) : nlohmann::json(nullptr)},
          {"samples_per_second", t.samples_per_second}, {"report", t.report_path}};
}

}  // namespace

nlohmann::json verify_against_default(Tuner& tuner, TrialExecutor& tuned_executor, TrialExecutor& default_executor,
                                      const nlohmann::json& best_point, const VerificationPlan& plan) {
  double tuned_total = 0, default_total = 0;
  bool all_reached = true;
  nlohmann::json pairs = nlohmann::json::array();
  for (int s = 0; s < plan.seeds; ++s) {
    const std::string suffix = s == 0 ? "" : "-seed" + std::to_string(s);
    nlohmann::json tuned_point = best_point, default_point = nlohmann::json::object();
    if (s > 0 && !plan.seed_as_level) tuned_point["seed"] = default_point["seed"] = plan.base_seed + s;
    const int64_t level = 1 + (plan.seed_as_level ? s : 0);
    const Trial tuned = tuner.verify(tuned_executor, tuned_point, "best" + suffix, level);
    const Trial fallback = tuner.verify(default_executor, default_point, "default" + suffix, level);
    const bool reached = tuned.time_to_target_s && fallback.time_to_target_s;
    all_reached &= reached;
    if (reached) {
      tuned_total += *tuned.time_to_target_s;
      default_total += *fallback.time_to_target_s;
    }
    pairs.push_back({{"seed", plan.base_seed + s},
                     {"best", describe(tuned)},
                     {"default", describe(fallback)},
                     {"speedup", reached ? nlohmann::json(*fallback.time_to_target_s / *tuned.time_to_target_s) : nlohmann::json(nullptr)}});
  }
  return {{"best", pairs[0]["best"]},
          {"default", pairs[0]["default"]},
          {"seeds", pairs},
          {"speedup", all_reached ? nlohmann::json(default_total / tuned_total) : nlohmann::json(nullptr)}};
}

}  // namespace dyno
