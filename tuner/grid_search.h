// GridSearch: every point of the space, in order: the exhaustive reference.
#pragma once

#include "tuner/strategy.h"

namespace dyno {

class GridSearch : public Strategy {
 public:
  void run(Tuner& tuner) override;
};

}  // namespace dyno
