// ConvergenceGuard: rejects a fast configuration that does not train (docs/tuner.md, "The
// convergence guard"): its loss must stay finite, fall, and with numerics other than fp32 end
// within tolerance of its fp32 reference over the windows both have.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dyno {

struct ConvergenceGuard {
  double relative_tolerance = 0.15;  // candidate final loss <= reference * (1 + rel) + abs
  double absolute_tolerance = 0.05;
  // A measured reference runs over the first half of its candidate's windows, at least these.
  size_t min_reference_windows = 8;

  // Each numeric shortcut and its full-precision value: the knobs of role Numerics at their
  // defaults; a program's space adds its own (SearchSpace::exact_values).
  std::vector<std::pair<std::string, nlohmann::json>> exact_values = full_precision_values();
  static std::vector<std::pair<std::string, nlohmann::json>> full_precision_values();

  // The fp32 reference point for `point`, or nullopt when `point` already is fp32.
  std::optional<nlohmann::json> reference_point(const nlohmann::json& point) const;
  // True when two points differ only in knobs that do not change the arithmetic (Knob::speed_only):
  // a measured trial of one serves as the other's reference.
  static bool same_trajectory(const nlohmann::json& a, const nlohmann::json& b);
  // How many loss windows a reference measured for a candidate of `candidate_windows` needs.
  size_t reference_windows(size_t candidate_windows) const {
    return std::min(candidate_windows, std::max(min_reference_windows, (candidate_windows + 1) / 2));
  }
  // nullopt when the candidate passes; otherwise the reason it is rejected.
  std::optional<std::string> check(const std::vector<double>& candidate_losses, const std::vector<double>* reference_losses) const;
};

}  // namespace dyno
