#include "dyno/tuner/decision.h"

#include <cmath>

#include "dyno/reports/comparison.h"

namespace dyno {

Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule) {
  const bool a_out = a.failed || a.figures.empty(), b_out = b.failed || b.figures.empty();
  Comparison c;
  if (a_out || b_out) {
    c.verdict = a_out && b_out ? Verdict::Equivalent : a_out ? Verdict::SecondBetter : Verdict::FirstBetter;
    return c;
  }
  c.posterior = difference(noise.posterior(a), noise.posterior(b));
  c.difference = c.posterior.mean();
  const double tail = (1.0 - rule.confidence) / 2.0;
  const double widen = student_t_quantile(1.0 - tail, noise.degrees_of_freedom()) / normal_quantile(1.0 - tail);
  c.low = c.posterior.quantile(tail, widen);
  c.high = c.posterior.quantile(1.0 - tail, widen);
  if (c.low > -rule.margin && c.high < rule.margin) {
    c.verdict = Verdict::Equivalent;
  } else if (c.low > 0) {
    c.verdict = Verdict::FirstBetter;
  } else if (c.high < 0) {
    c.verdict = Verdict::SecondBetter;
  }
  return c;
}

double expected_loss(const Comparison& comparison, Verdict choice) {
  Posterior chosen = comparison.posterior;  // of (chosen - other)
  if (choice == Verdict::Unknown ? comparison.difference < 0 : choice == Verdict::SecondBetter)
    for (double& m : chosen.means) m = -m;
  return chosen.expected_shortfall();
}

bool answered(const Comparison& comparison, const DecisionRule& rule, Verdict choice) { return comparison.verdict == Verdict::Equivalent || expected_loss(comparison, choice) < rule.indifference; }

bool equivalence_reachable(const Comparison& c, const DecisionRule& rule, double processes, double more) {
  return std::abs(c.difference) + (c.high - c.low) / 2 * std::sqrt(processes / (processes + more)) < rule.margin;
}

Verdict settle(const Comparison& comparison) {
  if (comparison.verdict != Verdict::Unknown) return comparison.verdict;
  return comparison.difference > 0 ? Verdict::FirstBetter : Verdict::SecondBetter;
}

}  // namespace dyno
