// decide(a, b): the one comparison behind every choice the tuner makes between two points. From
// both points' evidence (one figure per process) and the between-process noise model it answers
// "a is better", "b is better", "equivalent within the margin" or "not known yet"; the tuner
// answers the last by measuring the less-measured point in one more process (Tuner::compare)
// while a wrong choice could still cost more than the indifference in expectation, up to a cap.
// Tie-breaks (simpler, smaller batch, less memory) apply only to "equivalent".
//
// The difference of the two estimates (means of log figures) has the variance
// noise * (1 / n_a + 1 / n_b); its interval uses Student's t with the noise model's degrees of
// freedom. (`dyno compare`'s rank statistics need four or more figures a side; a search decides
// most comparisons on one or two processes a point, which only a pooled variance can judge.)
#pragma once

#include <cstddef>

#include "tuner/evidence.h"

namespace dyno {

enum class Verdict { FirstBetter, SecondBetter, Equivalent, Unknown };

struct DecisionRule {
  double margin = 0.02;        // equivalent: the whole interval of log(a / b) within +-2%
  double confidence = 0.95;    // two-sided, for both "better" and "equivalent"
  size_t max_processes = 4;    // per point; at the cap "not known" is settled on the estimates (settle)
  // "Not known" is settled on the estimates, without more processes, once taking the higher
  // estimate could cost less than this in expectation (expected_loss): 0.2% a choice.
  double indifference = 0.002;
};

struct Comparison {
  Verdict verdict = Verdict::Unknown;
  double difference = 0;  // estimate of log(a / b)
  double low = 0;         // its confidence interval
  double high = 0;
  double standard_error = 0;
};

// A point that failed (or has no evidence) loses to one that did not; two failed points are equivalent.
Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule);

// What choosing the point with the higher estimate costs in expectation (log scale), if the true
// difference is normal around the estimate with the comparison's standard error:
// E[max(0, -difference)] for the chosen side, se * (pdf(z) - z * (1 - cdf(z))), z = |d| / se. It
// is small when the estimates are far apart for their noise, or when both are so well measured
// that a wrong choice could only be a small one: then more processes are not worth their time.
double expected_loss(const Comparison& comparison);

// Whether the comparison needs no more processes: it has a verdict, or taking the higher estimate
// could cost less than the indifference in expectation. (The cap is Tuner::compare's: a race has
// its own number of rounds.)
bool answered(const Comparison& comparison, const DecisionRule& rule);

// "Not known" when no more processes will be bought (the cap, or an expected loss below the
// indifference): equivalent when the estimates differ by less than the margin, else the higher
// estimate is better. Other verdicts are returned as they are.
Verdict settle(const Comparison& comparison, const DecisionRule& rule);

}  // namespace dyno
