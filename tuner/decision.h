// decide(a, b): the one comparison behind every choice the tuner makes between two points (docs/
// tuner.md, "How two points are compared", rules 1-7): "a is better", "b is better", "equivalent
// within the margin" or "not known yet". (`dyno compare`'s rank statistics need four figures a
// side; a search decides most comparisons on one or two.)
#pragma once

#include <cstddef>

#include "dyno/tuner/evidence.h"
#include "dyno/tuner/noise_model.h"

namespace dyno {

enum class Verdict { FirstBetter, SecondBetter, Equivalent, Unknown };

struct DecisionRule {
  double margin = 0.02;        // equivalent: the whole interval of log(a / b) within +-2%
  double confidence = 0.95;    // two-sided, for both "better" and "equivalent"
  size_t max_processes = 4;    // per point; at the cap "not known" is settled on the estimates (settle)
  // A comparison ends once taking the higher estimate could cost less than this in expectation
  // (expected_loss): 0.05% a choice, about 1% over the twenty-odd choices of a staged search.
  double indifference = 0.0005;
  // A race stops telling apart points known within +-4% of its leader (an expected loss <= ~0.8%).
  double resolution = 0.04;
  // Time to target's phase 1 (docs/tuner.md, "Time to target").
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

// What choosing `choice` (the first or the second point; Unknown: the higher estimate) costs in
// expectation (log scale): the expected shortfall of the difference's posterior, toward that side.
double expected_loss(const Comparison& comparison, Verdict choice = Verdict::Unknown);

// Whether the comparison needs no more processes: equivalent, or an expected loss of `choice` (the
// one stopping now would make) under the indifference (a "better" verdict alone is wrong one time in forty).
bool answered(const Comparison& comparison, const DecisionRule& rule, Verdict choice = Verdict::Unknown);

// Whether `more` processes a side could show it equivalent: the estimate plus a half-width narrowing as 1 / sqrt(processes) within the margin.
bool equivalence_reachable(const Comparison& comparison, const DecisionRule& rule, double processes, double more);

// A verdict as it is; "not known" goes to the higher estimate. Never "equivalent": estimates
// within the margin are not evidence that a simpler point loses nothing.
Verdict settle(const Comparison& comparison);

}  // namespace dyno
