// ConvergenceGuard: rejects a fast configuration that does not train. A candidate's loss
// trajectory over its measured steps must (1) stay finite, (2) fall (its last window below its
// first), and (3) when its numerics differ from fp32 (amp, tf32), end within tolerance of the
// reference run: the same point with amp=off and tf32=false (same batch and LR rule), compared
// over the windows both trajectories have (trials stop at different steps).
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
  // A reference that has to be measured runs over the first half of its candidate's windows (at
  // least min_reference_windows of them): the guard compares trajectories over their first steps,
  // and fp32 is the slow run.
  size_t min_reference_windows = 8;

  // Each numeric shortcut and its full-precision value: the knobs of role Numerics at their
  // defaults (amp off, tf32 false, flush_denormal false); a program's space adds its own
  // (SearchSpace::exact_values).
  std::vector<std::pair<std::string, nlohmann::json>> exact_values = full_precision_values();
  static std::vector<std::pair<std::string, nlohmann::json>> full_precision_values();

  // The fp32 reference point for `point`, or nullopt when `point` already is fp32.
  std::optional<nlohmann::json> reference_point(const nlohmann::json& point) const;
  // True when two points train along the same loss trajectory: they differ only in knobs that do
  // not change the arithmetic (Knob::speed_only: loader threads, intra-op threads, memory format,
  // set_to_none, checkpointing, cuDNN autotuning, DDP bucketing). A measured trial of such a point
  // can serve as the reference, instead of measuring the reference point itself.
  static bool same_trajectory(const nlohmann::json& a, const nlohmann::json& b);
  // How many loss windows a reference measured for a candidate of `candidate_windows` needs.
  size_t reference_windows(size_t candidate_windows) const {
    return std::min(candidate_windows, std::max(min_reference_windows, (candidate_windows + 1) / 2));
  }
  // nullopt when the candidate passes; otherwise the reason it is rejected.
  std::optional<std::string> check(const std::vector<double>& candidate_losses, const std::vector<double>* reference_losses) const;
};

}  // namespace dyno
