// Evidence: what the tuner knows about one point's speed, one figure per process that measured it
// (the log of that process's median throughput, or of 1 / its seed's time to target), and the
// noise model that says how far such a figure moves from one process to the next. On a shared
// machine most of the noise is between processes (a process in a slow spell yields a tight,
// wrong interval), so a point's uncertainty is that of a mean over its processes, not the
// scatter of windows inside one of them.
#pragma once

#include <cstddef>
#include <vector>

namespace dyno {

struct PointEvidence {
  std::vector<double> figures;  // log objective, one per process
  bool failed = false;          // a process of the point failed (or missed its target): it cannot be chosen

  size_t processes() const { return figures.size(); }
  double estimate() const;  // mean of the figures (log scale); 0 without any
};

// The variance of one process's figure around its point's true value, pooled over every point
// measured in more than one process (sum of squared deviations from each point's mean over their
// degrees of freedom), with a weak prior so that the first decisions, before any point was
// measured twice, are cautious rather than blind.
class NoiseModel {
 public:
  static constexpr double kPriorSigma = 0.05;  // 5% between processes: this machine's typical spread
  static constexpr double kPriorWeight = 1.0;  // worth one degree of freedom

  void add(const PointEvidence& point);
  double variance() const;
  double degrees_of_freedom() const { return kPriorWeight + degrees_of_freedom_; }

 private:
  double sum_of_squares_ = 0;
  double degrees_of_freedom_ = 0;
};

// Student's t quantile: exact for one and two degrees of freedom, else the Cornish-Fisher expansion
// around the normal quantile (within 0.1% of the tables from three degrees of freedom).
double student_t_quantile(double p, double degrees_of_freedom);

}  // namespace dyno
