#include "tuner/strategy.h"

#include "reports/user_error.h"
#include "tuner/grid_search.h"
#include "tuner/staged_search.h"
#include "tuner/successive_halving.h"

namespace dyno {

std::unique_ptr<Strategy> make_strategy(const std::string& name) {
  if (name == "grid") return std::make_unique<GridSearch>();
  if (name == "random") return std::make_unique<GridSearch>(/*shuffled=*/true);
  if (name == "staged") return std::make_unique<StagedSearch>();
  if (name == "halving") return std::make_unique<SuccessiveHalving>();
  throw UserError("tune", "--strategy: '" + name + "' is not one of grid, random, staged, halving");
}

}  // namespace dyno
