// RandomSearch: distinct points of the space in a seeded random order, until the budget is spent.
#pragma once

#include <cstdint>

#include "tuner/strategy.h"

namespace dyno {

class RandomSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;
};

}  // namespace dyno
