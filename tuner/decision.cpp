#include "tuner/decision.h"

#include <cmath>

namespace dyno {

Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule) {
  const bool a_out = a.failed || a.figures.empty(), b_out = b.failed || b.figures.empty();
  Comparison c;
  if (a_out || b_out) {
    c.verdict = a_out && b_out ? Verdict::Equivalent : a_out ? Verdict::SecondBetter : Verdict::FirstBetter;
    return c;
  }
  c.difference = a.estimate() - b.estimate();
  const double se = std::sqrt(noise.variance() * (1.0 / static_cast<double>(a.processes()) + 1.0 / static_cast<double>(b.processes())));
  const double t = student_t_quantile(0.5 + rule.confidence / 2.0, noise.degrees_of_freedom());
  c.standard_error = se;
  c.low = c.difference - t * se;
  c.high = c.difference + t * se;
  if (c.low > -rule.margin && c.high < rule.margin) {
    c.verdict = Verdict::Equivalent;
  } else if (c.low > 0) {
    c.verdict = Verdict::FirstBetter;
  } else if (c.high < 0) {
    c.verdict = Verdict::SecondBetter;
  }
  return c;
}

double expected_loss(const Comparison& comparison) {
  const double se = comparison.standard_error;
  if (se <= 0) return 0.0;
  const double z = std::abs(comparison.difference) / se;
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  const double upper_tail = 0.5 * std::erfc(z / std::sqrt(2.0));
  return se * (pdf - z * upper_tail);
}

bool answered(const Comparison& comparison, const DecisionRule& rule) {
  return comparison.verdict != Verdict::Unknown || expected_loss(comparison) < rule.indifference;
}

Verdict settle(const Comparison& comparison, const DecisionRule& rule) {
  if (comparison.verdict != Verdict::Unknown) return comparison.verdict;
  if (std::abs(comparison.difference) < rule.margin) return Verdict::Equivalent;
  return comparison.difference > 0 ? Verdict::FirstBetter : Verdict::SecondBetter;
}

}  // namespace dyno
