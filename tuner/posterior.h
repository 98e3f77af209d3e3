// Posterior: what the evidence says about a true value on the log scale (a point's, or the
// difference of two points'): a mixture of normals, one component for each count of processes
// that may have run in a slow spell (docs/tuner.md, rule 3).
#pragma once

#include <vector>

namespace dyno {

struct Posterior {
  std::vector<double> weights;  // sum to 1
  std::vector<double> means;
  std::vector<double> sds;

  double mean() const;
  // The value below which the share q lies, each component's deviation widened by `widen` (Student's
  // t over the normal quantile, when sigma itself is an estimate).
  double quantile(double q, double widen = 1.0) const;
  // E[max(0, -X)]: what taking X > 0 costs in expectation when X is in fact below zero.
  double expected_shortfall() const;
};

// The posterior of a - b for independent a and b: every pair of components (negligible ones dropped).
Posterior difference(const Posterior& a, const Posterior& b);

}  // namespace dyno
