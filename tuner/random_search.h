// RandomSearch: distinct points of the space in a seeded random order, until the budget is spent.
#pragma once

#include <cstdint>

#include "tuner/strategy.h"

namespace dyno {

class RandomSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
};

}  // namespace dyno
