#include "dyno/suite/slowdown_controller.h"

#include <algorithm>
#include <vector>

namespace dyno {

double SlowdownController::delay_s(double now_s, double step_s) {
  constexpr size_t kPeriods = 8;
  if (last_call_s_) {
    undelayed_periods_s_.push_back(std::max(0.0, now_s - *last_call_s_ - last_delay_s_));
    if (undelayed_periods_s_.size() > kPeriods) undelayed_periods_s_.pop_front();
  }
  last_call_s_ = now_s;
  double period_s = step_s;
  if (!undelayed_periods_s_.empty()) {
    std::vector<double> sorted(undelayed_periods_s_.begin(), undelayed_periods_s_.end());
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
    period_s = sorted[sorted.size() / 2];
  }
  return last_delay_s_ = fraction_ * period_s;
}

}  // namespace dyno
