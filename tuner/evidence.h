// Evidence: what the tuner knows about one point's speed, one figure per process that measured it
// (the log of that process's median throughput, or of 1 / its seed's time to target). On a shared
// machine most of the noise is between processes (a process in a slow spell yields a tight, wrong
// interval), so a point's uncertainty is that of its processes' figures (tuner/noise_model.h),
// not the scatter of windows inside one of them.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

namespace dyno {

struct PointEvidence {
  std::vector<double> figures;  // log objective, one per process
  bool failed = false;          // a process of the point failed (or missed its target): it cannot be chosen

  size_t processes() const { return figures.size(); }
  // Of the figures (log scale); 0 without any.
  double mean() const { return figures.empty() ? 0.0 : std::accumulate(figures.begin(), figures.end(), 0.0) / static_cast<double>(figures.size()); }
};

}  // namespace dyno
