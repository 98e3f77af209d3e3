// decide(a, b): the one comparison behind every choice the tuner makes between two points. From
// both points' evidence (one figure per process) and the between-process noise model it answers
// "a is better", "b is better", "equivalent within the margin" or "not known yet"; the tuner
// answers the last by measuring the less-measured point in one more process, up to a cap
// (Tuner::compare). Tie-breaks (simpler, smaller batch, less memory) apply only to "equivalent".
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
  size_t max_processes = 4;    // per point; at the cap "not known" is settled on the estimates (settle_at_cap)
};

struct Comparison {
  Verdict verdict = Verdict::Unknown;
  double difference = 0;  // estimate of log(a / b)
  double low = 0;         // its confidence interval
  double high = 0;
};

// A point that failed (or has no evidence) loses to one that did not; two failed points are equivalent.
Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule);

// "Not known" when neither point may be measured again: equivalent when the estimates differ by
// less than the margin, else the higher estimate is better. Other verdicts are returned as they are.
Verdict settle_at_cap(const Comparison& comparison, const DecisionRule& rule);

const char* to_string(Verdict verdict);

}  // namespace dyno
