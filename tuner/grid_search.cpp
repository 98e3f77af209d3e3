#include "tuner/grid_search.h"

#include "tuner/tuner.h"

namespace dyno {

void GridSearch::run(Tuner& tuner) {
  for (const auto& point : tuner.space().grid()) tuner.measure(point, "grid");
}

}  // namespace dyno
