// decide(a, b): the one comparison behind every choice the tuner makes between two points. From
// both points' evidence (one figure per process) and the noise model (tuner/noise_model.h) it
// answers "a is better", "b is better", "equivalent within the margin" or "not known yet"; the
// tuner answers the last by measuring the less-measured point in one more process (Tuner::compare)
// while a wrong choice could still cost more than the indifference in expectation, up to a cap.
// Tie-breaks (simpler, smaller batch, less memory) apply only to "equivalent".
//
// The difference of the two points' true values has, from their posteriors, a mixture of normals
// (one component for each count of slow processes on either side) with the standard error
// sigma * sqrt(1 / n_a + 1 / n_b); its interval is the mixture's quantiles, each component widened
// by Student's t on the noise model's degrees of freedom. (`dyno compare`'s rank statistics need
// four or more figures a side; a search decides most comparisons on one or two processes a point,
// which only a pooled noise model can judge.)
#pragma once

#include <cstddef>

#include "tuner/evidence.h"
#include "tuner/noise_model.h"

namespace dyno {

enum class Verdict { FirstBetter, SecondBetter, Equivalent, Unknown };

struct DecisionRule {
  double margin = 0.02;        // equivalent: the whole interval of log(a / b) within +-2%
  double confidence = 0.95;    // two-sided, for both "better" and "equivalent"
  size_t max_processes = 4;    // per point; at the cap "not known" is settled on the estimates (settle)
  // A comparison ends, settled on the estimates when not known, once taking the higher estimate
  // could cost less than this in expectation (expected_loss): 0.05% a choice, about 1% over the
  // twenty-odd choices of a staged search.
  double indifference = 0.0005;
};

struct Comparison {
  Verdict verdict = Verdict::Unknown;
  double difference = 0;  // estimate of log(a / b): the posterior mean
  double low = 0;         // its confidence interval
  double high = 0;
  double standard_error = 0;  // of the component without a slow spell
  Posterior posterior;        // of log(a / b); without components, one at `difference`
};

// A point that failed (or has no evidence) loses to one that did not; two failed points are equivalent.
Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule);

// What choosing the point with the higher estimate costs in expectation (log scale) under the
// posterior of the difference: E[max(0, -difference)] for the chosen side, each normal component
// contributing se * (pdf(z) - z * (1 - cdf(z))), z = its mean / se (sign toward the chosen side). It
// is small when the estimates are far apart for their noise, or when both are so well measured
// that a wrong choice could only be a small one: then more processes are not worth their time. A
// point measured once keeps the slow-spell chance of being a slow shift better than it read: a
// loss within that shift is worth a second process.
double expected_loss(const Comparison& comparison);

// Whether the comparison needs no more processes: the points are equivalent, or taking the higher
// estimate could cost less than the indifference in expectation. A "better" verdict alone is not
// enough: at 95% it is wrong one time in forty, and a search makes twenty-odd choices. (The cap is
// Tuner::compare's: a race has its own number of rounds.)
bool answered(const Comparison& comparison, const DecisionRule& rule);

// "Not known" when no more processes will be bought (the cap, or an expected loss below the
// indifference): the higher estimate is better, the choice that costs least in expectation.
// Equivalence is only ever a verdict (the whole interval within the margin): estimates within the
// margin are not evidence that a simpler point loses nothing. Other verdicts are returned as they are.
Verdict settle(const Comparison& comparison);

}  // namespace dyno
