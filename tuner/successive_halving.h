// SuccessiveHalving: many candidates measured briefly, the best third measured three times
// longer, and so on until one remains (Jamieson & Talwalkar; the "rungs" of Hyperband).
#pragma once

#include <cstdint>

#include "tuner/strategy.h"

namespace dyno {

class SuccessiveHalving : public Strategy {
 public:
  explicit SuccessiveHalving(int64_t reduction = 3) : reduction_(reduction) {}
  void run(Tuner& tuner) override;

 private:
  int64_t reduction_;
};

}  // namespace dyno
