// NoiseModel: how far one process's figure for a point lies from the point's true value (docs/
// tuner.md, rule 2). A figure is the true value plus a normal error (sigma, the spread between
// processes), less `slow_shift` with probability `slow_chance`: a process that ran the whole way in
// a slow spell (another tenant, memory in small pages), which only ever lowers a figure. The three
// parameters are fitted by expectation-maximisation to the points measured in more than one process
// (which processes ran slow is the hidden part), each with a weak prior, so that the first
// decisions are cautious rather than blind and a machine without slow spells soon shows it.
#pragma once

#include <cstddef>
#include <vector>

#include "tuner/evidence.h"
#include "tuner/posterior.h"

namespace dyno {

class NoiseModel {
 public:
  static constexpr double kPriorSigma = 0.05;       // the normal spread: this machine's typical 5%
  static constexpr double kPriorSigmaWeight = 1.0;  // worth one degree of freedom
  static constexpr double kPriorSlowChance = 0.1;   // one process in ten
  static constexpr double kPriorSlowWeight = 10.0;  // worth ten processes
  static constexpr double kPriorSlowShift = 0.2;    // log scale: about 18% slower
  static constexpr double kPriorShiftWeight = 1.0;  // worth two figures, one of them slow
  // A slow spell's size varies: its standard deviation, as a share of the shift. (The fit takes the
  // shift as fixed; the posterior widens each component by the spells it assumes.)
  static constexpr double kSlowSpread = 0.25;
  // How far the fitted shift may be from the true one: the prior's uncertainty (kPriorShiftSd),
  // shrinking with the slow processes seen. Until slow spells have been seen, a slow spell far
  // larger than the prior's is still an explanation of a low figure.
  static constexpr double kPriorShiftSd = 0.2;

  NoiseModel() = default;  // the priors alone
  // Fitted to `points`; those measured in fewer than two processes carry no information about the noise.
  // Without `slow_spells` the model is the normal error alone (slow_chance() 0): time to target's
  // processes are seeds, and a seed that needs one more evaluation than another is the point's own
  // cost, which the verification pays in full, not a spell of the machine's to discount.
  static NoiseModel fit(const std::vector<PointEvidence>& points, bool slow_spells = true);

  double sigma() const { return sigma_; }
  // Of sigma's estimate: the prior's weight plus one for each repeated process.
  double degrees_of_freedom() const { return degrees_of_freedom_; }
  double slow_chance() const { return slow_chance_; }
  double slow_shift() const { return slow_shift_; }
  // The standard deviation of one slow spell's shift as the posterior sees it: its own spread and
  // the uncertainty of the fitted shift.
  double slow_spread() const;

  // What the point's figures say about its true value, from a flat prior: component k stands for
  // "k of its n processes ran in a slow spell", its mean the figures' mean plus k / n slow shifts,
  // its variance (n sigma^2 + k spread^2) / n^2.
  Posterior posterior(const PointEvidence& point) const;

 private:
  double sigma_ = kPriorSigma;
  double degrees_of_freedom_ = kPriorSigmaWeight;
  double slow_chance_ = kPriorSlowChance;
  double slow_shift_ = kPriorSlowShift;
  double slow_seen_ = 0;  // expected slow processes among the repeated points
};

}  // namespace dyno
