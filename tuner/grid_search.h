// GridSearch: every point of the space, in order: the exhaustive reference.
#pragma once

#include <cstdint>

#include "tuner/strategy.h"

namespace dyno {

class GridSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;
};

}  // namespace dyno
