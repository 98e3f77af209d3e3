#include "dyno/tuner/strategy.h"

#include "dyno/reports/user_error.h"
#include "dyno/tuner/grid_search.h"
#include "dyno/tuner/staged_search.h"
#include "dyno/tuner/successive_halving.h"

namespace dyno {

std::unique_ptr<Strategy> make_strategy(const std::string& name) {
  if (name == "grid") return std::make_unique<GridSearch>();
  if (name == "random") return std::make_unique<GridSearch>(/*shuffled=*/true);
  if (name == "staged") return std::make_unique<StagedSearch>();
  if (name == "halving") return std::make_unique<SuccessiveHalving>();
  throw UserError("tune", "--strategy: '" + name + "' is not one of grid, random, staged, halving");
}

}  // namespace dyno
