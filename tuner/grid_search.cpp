#include "tuner/grid_search.h"

#include <algorithm>

#include "tuner/tuner.h"

namespace dyno {

void GridSearch::run(Tuner& tuner) {
  for (const auto& point : tuner.space().grid()) tuner.measure(point, "grid");
}

int64_t GridSearch::expected_trials(const SearchSpace& space, int64_t max_trials) const {
  return max_trials > 0 ? std::min(max_trials, space.grid_size()) : space.grid_size();
}

}  // namespace dyno
