#include "tuner/target_time_cap.h"

#include <algorithm>

#include "tuner/tuner.h"

namespace dyno {

double search_time_cap(const Tuner& tuner, double cap_s) {
  const Trial* best = tuner.best();
  return best && best->time_to_target_s ? std::min(cap_s, *best->time_to_target_s * 1.3 + 5) : cap_s;
}

double race_time_cap(const Tuner& tuner, double cap_s) {
  const Trial* best = tuner.best_where([](const Trial& t) { return t.budget_level == 1 && t.candidate(); });
  return best && best->time_to_target_s ? std::min(cap_s, *best->time_to_target_s * 2 + 10) : cap_s;
}

}  // namespace dyno
