#include "tuner/grid_search.h"

#include "tuner/tuner.h"

namespace dyno {

void GridSearch::run(Tuner& tuner) {
  for (const auto& point : tuner.space().grid()) tuner.measure(point, "grid");
}

int64_t GridSearch::expected_trials(const SearchSpace& space, int64_t max_trials) const {
  return within_trial_limit(space.grid_size(), max_trials);
}

}  // namespace dyno
