#include "dyno/tuner/successive_halving.h"

#include <algorithm>
#include <random>

#include "dyno/tuner/tuner.h"

namespace dyno {
namespace {

// As many candidates as two thirds of the trial budget (all, without one); half, for a last rung's race.
size_t first_rung(int64_t grid_size, int64_t max_trials) {
  if (max_trials <= 0) return static_cast<size_t>(grid_size);
  const int64_t rung = std::min(grid_size, std::max<int64_t>(SuccessiveHalving::kReduction, max_trials * 2 / 3));
  return static_cast<size_t>(rung <= static_cast<int64_t>(SuccessiveHalving::kLastRung) ? std::min(rung, std::max<int64_t>(1, max_trials / 2)) : rung);
}

}  // namespace

int64_t SuccessiveHalving::expected_trials(const SearchSpace& space, int64_t max_trials) const {
  size_t rung = first_rung(space.grid_size(), max_trials);
  auto total = static_cast<int64_t>(rung <= kLastRung ? rung : 0);  // the race measures a point no rung did first
  for (; rung > kLastRung; rung = std::max<size_t>(1, rung / static_cast<size_t>(kReduction))) total += static_cast<int64_t>(rung);
  if (rung > 1) total += static_cast<int64_t>(rung);  // the race's first round (later ones, while undecided, not counted)
  return within_trial_limit(total, max_trials);
}

void SuccessiveHalving::run(Tuner& tuner) {
  auto points = tuner.space().grid();
  std::mt19937_64 rng(tuner.options().seed * 2654435761ULL + 7);
  for (size_t i = points.size(); i > 1; --i) std::swap(points[i - 1], points[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
  points.resize(first_rung(static_cast<int64_t>(points.size()), tuner.options().max_trials));
  int64_t level = 1;
  while (points.size() > kLastRung) {
    for (const auto& p : points) tuner.measure(p, "halving-rung" + std::to_string(level), level);
    const size_t keep = std::max<size_t>(1, points.size() / static_cast<size_t>(kReduction));
    points = tuner.ranked(points);
    if (points.size() > keep) points.resize(keep);
    level *= kReduction;
  }
  tuner.final_race(points, kRaceRounds);
}

}  // namespace dyno
