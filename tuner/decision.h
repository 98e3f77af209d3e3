// decide(a, b): the one comparison behind every choice the tuner makes between two points (rules
// 1-7 of docs/tuner.md, "How two points are compared"). From both points' evidence and the noise
// model it answers "a is better", "b is better", "equivalent within the margin" or "not known yet";
// the tuner answers the last by measuring the less-measured point once more (Tuner::compare).
// The interval of log(a / b) is the quantiles of the difference of the two posteriors, each
// component widened by Student's t on the noise model's degrees of freedom. (`dyno compare`'s rank
// statistics need four figures a side; a search decides most comparisons on one or two.)
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
  // Time to target's throughput phase: its throughput reaches the time to target through whole
  // evaluations and the seeds' spread, and its batch is refined in phase 2 (docs/tuner.md).
  static constexpr double kThroughputPhaseIndifference = 0.002;
};

struct Comparison {
  Verdict verdict = Verdict::Unknown;
  double difference = 0;  // estimate of log(a / b): the posterior mean
  double low = 0;         // its confidence interval
  double high = 0;
  Posterior posterior;  // of log(a / b); none when a point failed or has no evidence
};

// A point that failed (or has no evidence) loses to one that did not; two failed points are equivalent.
Comparison decide(const PointEvidence& a, const PointEvidence& b, const NoiseModel& noise, const DecisionRule& rule);

// What choosing the point with the higher estimate costs in expectation (log scale): the expected
// shortfall of the difference's posterior, toward the chosen side. It is small when the estimates
// are far apart for their noise, or so well measured that a wrong choice could only be small.
double expected_loss(const Comparison& comparison);

// Whether the comparison needs no more processes: the points are equivalent, or taking the higher
// estimate could cost less than the indifference in expectation (a "better" verdict alone is wrong
// one time in forty, and a search makes twenty-odd choices).
bool answered(const Comparison& comparison, const DecisionRule& rule);

// A verdict as it is; "not known", when no more processes will be bought, goes to the higher
// estimate (the least expected cost). Never "equivalent": estimates within the margin are not
// evidence that a simpler point loses nothing.
Verdict settle(const Comparison& comparison);

}  // namespace dyno
