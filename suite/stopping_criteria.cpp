#include "dyno/suite/stopping_criteria.h"

#include <limits>

#include "dyno/reports/statistics.h"

namespace dyno {

StoppingCriteria::StoppingCriteria(Parameters parameters)
    : parameters_(parameters),
      best_metric_(parameters.higher_is_better ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity()) {}

std::string StoppingCriteria::after_window(const std::vector<double>& windows) const {
  if (windows.size() < parameters_.min_windows) return "";
  if (parameters_.max_relative_ci > 0 && relative_ci_half_width(windows) < parameters_.max_relative_ci) return "stable";
  if (parameters_.stop_below > 0 && median_confidence_interval(windows).high * parameters_.ranks < parameters_.stop_below)
    return "outpaced";
  return "";
}

bool StoppingCriteria::reached(double metric) const {
  if (parameters_.target <= 0) return false;  // no target
  return parameters_.higher_is_better ? metric >= parameters_.target : metric <= parameters_.target;
}

void StoppingCriteria::restore(double best_metric, int64_t evaluations_without_improvement) {
  best_metric_ = best_metric;
  evaluations_without_improvement_ = evaluations_without_improvement;
}

std::string StoppingCriteria::standing(bool target_was_reached) const {
  if (parameters_.stop_at_target && target_was_reached) return "target_reached";
  if (parameters_.plateau_patience > 0 && evaluations_without_improvement_ >= parameters_.plateau_patience) return "plateau";
  return "";
}

std::string StoppingCriteria::after_evaluation(double metric) {
  const bool improved = parameters_.higher_is_better ? metric > best_metric_ : metric < best_metric_;
  if (improved) {
    best_metric_ = metric;
    evaluations_without_improvement_ = 0;
  } else {
    ++evaluations_without_improvement_;
  }
  if (parameters_.stop_at_target && reached(metric)) return "target_reached";
  if (parameters_.plateau_patience > 0 && evaluations_without_improvement_ >= parameters_.plateau_patience) return "plateau";
  return "";
}

}  // namespace dyno
