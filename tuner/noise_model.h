// NoiseModel: how far one process's figure for a point lies from the point's true value (docs/
// tuner.md, rule 2): a normal error (sigma), less `slow_shift` with probability `slow_chance` (a
// slow spell only ever lowers a figure), fitted by expectation-maximisation with weak priors.
#pragma once

#include <cmath>
#include <vector>

#include "dyno/tuner/evidence.h"
#include "dyno/tuner/posterior.h"

namespace dyno {

class NoiseModel {
 public:
  static constexpr double kPriorSigma = 0.05;       // the normal spread: this machine's typical 5%
  static constexpr double kPriorSigmaWeight = 1.0;  // worth one degree of freedom
  static constexpr double kPriorSlowChance = 0.1;   // one process in ten
  static constexpr double kPriorSlowWeight = 10.0;  // worth ten processes
  static constexpr double kPriorSlowShift = 0.2;    // log scale: about 18% slower
  static constexpr double kPriorShiftWeight = 1.0;  // worth two figures, one of them slow
  // A slow spell's standard deviation, as a share of the shift (the posterior's, not the fit's).
  static constexpr double kSlowSpread = 0.25;
  // The fitted shift's uncertainty with no slow process seen; it shrinks with those seen.
  static constexpr double kPriorShiftSd = 0.2;

  NoiseModel() = default;  // the priors alone
  // Fitted to the `points` measured in two processes or more. Without `slow_spells`, the normal
  // error alone: time to target's processes are seeds, and a slower seed is the point's own cost.
  static NoiseModel fit(const std::vector<PointEvidence>& points, bool slow_spells = true);

  double sigma() const { return sigma_; }
  // Of sigma's estimate: the prior's weight plus one for each repeated process.
  double degrees_of_freedom() const { return degrees_of_freedom_; }
  double slow_chance() const { return slow_chance_; }
  double slow_shift() const { return slow_shift_; }
  // The standard deviation of one slow spell's shift: its own spread (each spell's alone) and the
  // fitted shift's uncertainty (shared by every spell).
  double spell_spread() const { return kSlowSpread * slow_shift_; }
  double shift_sd() const { return kPriorShiftSd / std::sqrt(kPriorShiftWeight + slow_seen_); }
  double slow_spread() const { return std::hypot(spell_spread(), shift_sd()); }

  // The point's true value from a flat prior: component k stands for "k of its n processes ran in
  // a slow spell", mean the figures' mean plus k / n shifts, variance (n sigma^2 + k own^2 + k^2 u^2)
  // / n^2: each spell's own size varies alone (own), the fitted shift's uncertainty (u) is shared.
  Posterior posterior(const PointEvidence& point) const;

 private:
  double sigma_ = kPriorSigma;
  double degrees_of_freedom_ = kPriorSigmaWeight;
  double slow_chance_ = kPriorSlowChance;
  double slow_shift_ = kPriorSlowShift;
  double slow_seen_ = 0;  // expected slow processes among the repeated points
};

}  // namespace dyno
