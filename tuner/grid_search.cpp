#include "dyno/tuner/grid_search.h"

#include <random>

#include "dyno/tuner/tuner.h"

namespace dyno {

void GridSearch::run(Tuner& tuner) {
  auto points = tuner.space().grid();
  if (shuffled_) {
    std::mt19937_64 rng(tuner.options().seed * 2654435761ULL + 1);
    for (size_t i = points.size(); i > 1; --i) std::swap(points[i - 1], points[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  }
  for (const auto& point : points) tuner.measure(point, shuffled_ ? "random" : "grid");
}

int64_t GridSearch::expected_trials(const SearchSpace& space, int64_t max_trials) const { return within_trial_limit(space.grid_size(), max_trials); }

}  // namespace dyno
