// GridSearch: every point of the space, in order (the exhaustive reference), or for the random
// strategy in a seeded random order (the same seed asks for the same points in the same order,
// what resume relies on), until the budget is spent.
#pragma once

#include <cstdint>

#include "dyno/tuner/strategy.h"

namespace dyno {

class GridSearch : public Strategy {
 public:
  explicit GridSearch(bool shuffled = false) : shuffled_(shuffled) {}
  void run(Tuner& tuner) override;
  int64_t expected_trials(const SearchSpace& space, int64_t max_trials) const override;

 private:
  bool shuffled_;
};

}  // namespace dyno
