// Evidence: what the tuner knows about one point, one figure per process that measured it (docs/
// tuner.md, rule 1). Most noise is between processes, so the figures, not one process's windows,
// carry a point's uncertainty (tuner/noise_model.h).
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
